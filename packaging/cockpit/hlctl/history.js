// The History tab, the content of `hlctl history --html` drawn in the page:
// the last check's verdict per metric, a trend chart per metric (SVG, drawn
// here: no chart library) with the newest baseline as a dashed line, and a
// table of the latest results. Everything is read from hlctld:
// ListHistory, ListBaselines and Compare (all open to everyone).
import { el, errorText, val } from "./dom.js";
import { utc, value as figure } from "./units.js";

const SVG = "http://www.w3.org/2000/svg";
const MANAGER = ["/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager"];
// The plot area inside the chart's viewBox: values on the left, dates below.
const W = 380;
const H = 150;
const PAD = { l: 80, r: 8, t: 8, b: 22 };
// hlctl check's default: a change beyond this (percent) is a verdict.
const THRESHOLD = 10;

function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs))
        e.setAttribute(k, String(v));
    e.append(...children);
    return e;
}

// The dates under the axis: the first and last run, and the middle one when
// there are three or more and it stands clear of both; the day alone when
// the runs span two days or more, with the minute when they do not.
function dateTicks(points, x) {
    const mid = Math.floor((points.length - 1) / 2);
    const clear = i => Math.min(x(points[i].ts) - PAD.l, W - PAD.r - x(points[i].ts)) >= 90;
    const picks = points.length >= 3 && clear(mid) ? [0, mid, points.length - 1] : [0, points.length - 1];
    const span = points[points.length - 1].ts - points[0].ts;
    const label = ts => utc(ts).slice(0, span >= 2 * 86400 ? 10 : 16);
    return [...new Set(picks)].map((i, n, all) => {
        const ts = points[i].ts;
        const anchor = all.length === 1 ? "middle" : n === 0 ? "start" : n === all.length - 1 ? "end" : "middle";
        return svg("text", { x: x(ts).toFixed(1), y: H - 6, "text-anchor": anchor, class: "hl-chart-tick", "data-ts": ts },
                   label(ts), svg("title", {}, `${utc(ts)} UTC`));
    });
}

// The value under the pointer (or the arrow keys): the run nearest to it,
// named in the figure's readout as "2026-12-04 14:05:09 UTC: 941 Mbit/s".
function pointer(plot, readout, dots, points, unit) {
    const show = i => {
        dots.forEach((d, j) => d.classList.toggle("hl-chart-dot-on", i === j));
        readout.value = `${utc(points[i].ts)} UTC: ${figure(points[i].value, unit)}`;
        readout.dataset.ts = points[i].ts;
        plot.dataset.at = i;
    };
    plot.addEventListener("mousemove", ev => {
        const box = plot.getBoundingClientRect();
        const px = (ev.clientX - box.left) / box.width * W;
        let best = 0;
        dots.forEach((d, i) => {
            if (Math.abs(Number(d.getAttribute("cx")) - px) < Math.abs(Number(dots[best].getAttribute("cx")) - px))
                best = i;
        });
        show(best);
    });
    plot.addEventListener("keydown", ev => {
        const at = Number(plot.dataset.at ?? points.length - 1);
        const next = ev.key === "ArrowLeft" ? at - 1 : ev.key === "ArrowRight" ? at + 1 : at;
        if (next !== at && next >= 0 && next < points.length) {
            show(next);
            ev.preventDefault();
        }
    });
}

// The chart's runs as a table, for screen readers (and hidden from sight).
function runsTable(key, points, unit) {
    return el("table", { class: "hl-sr-only hl-chart-table" },
              el("caption", {}, key),
              el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Time (UTC)"), el("th", { scope: "col" }, "Value"))),
              el("tbody", {}, points.map(p => el("tr", { "data-ts": p.ts }, el("td", {}, utc(p.ts)), el("td", {}, figure(p.value, unit))))));
}

function chart(key, s, base) {
    const points = [...s.points].sort((a, b) => a.ts - b.ts);
    // From 0 to the highest value (or the baseline) + 10 %, as
    // `hlctl history --html` scales it: a 3 % dip looks like one.
    const top = Math.max(...points.map(p => p.value), base ?? 0) || 1;
    const hi = top * 1.1;
    const t0 = points[0].ts;
    const t1 = points[points.length - 1].ts;
    const x = ts => t1 === t0 ? (PAD.l + W - PAD.r) / 2 : PAD.l + (ts - t0) / (t1 - t0) * (W - PAD.l - PAD.r);
    const y = v => H - PAD.b - Math.max(0, v) / hi * (H - PAD.t - PAD.b);
    const line = points.map(p => `${x(p.ts).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
    const last = points[points.length - 1];
    const baseLine = base === undefined
        ? []
        : [svg("line", { x1: PAD.l, x2: W - PAD.r, y1: y(base).toFixed(1), y2: y(base).toFixed(1), class: "hl-chart-baseline", "data-baseline": base },
               svg("title", {}, `baseline ${figure(base, s.unit)}`))];
    const axes = [
        svg("line", { x1: PAD.l, x2: W - PAD.r, y1: H - PAD.b, y2: H - PAD.b, class: "hl-chart-axis" }),
        svg("line", { x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: H - PAD.b, class: "hl-chart-axis" }),
        ...[0, top].map(v => svg("text", { x: PAD.l - 4, y: (y(v) + 3).toFixed(1), "text-anchor": "end", class: "hl-chart-tick" }, figure(v, s.unit))),
        ...dateTicks(points, x),
    ];
    const dots = points.map(p => svg("circle", { cx: x(p.ts).toFixed(1), cy: y(p.value).toFixed(1), r: 3, class: "hl-chart-dot", "data-ts": p.ts, "data-value": p.value },
                                     svg("title", {}, `${utc(p.ts)} UTC: ${figure(p.value, s.unit)}`)));
    const readout = el("output", { class: "hl-chart-readout", "aria-live": "polite" });
    readout.value = "Point at a run for its date and value.";
    const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", tabindex: 0, "aria-label": `${key}: ${points.length} ${points.length === 1 ? "run" : "runs"} from ${utc(t0)} to ${utc(t1)} UTC; the table below lists them` },
                     ...axes, ...baseLine,
                     svg("polyline", { points: line, class: "hl-chart-line" }),
                     ...dots);
    pointer(plot, readout, dots, points, s.unit);
    return el("figure", { class: "hl-chart", "data-metric": key, "data-points": points.length },
              el("figcaption", {}, `${key}: ${figure(last.value, s.unit)} (${points.length} ${points.length === 1 ? "run" : "runs"})`,
                 base === undefined ? null : el("span", { class: "hl-muted" }, ` · baseline ${figure(base, s.unit)}`)),
              plot, readout, runsTable(key, points, s.unit));
}

const keyOf = (name, subject) => subject ? `${name} → ${subject}` : name;

// The last check against the previous one, as `hlctl check` judges it when
// no baseline is saved (history/compare.rs verdict, default threshold).
export function againstPrevious(prev, last) {
    const now = new Map((val(last.metrics) || []).map(m => [`${m[0]}\n${m[1]}`, m[2]]));
    return (val(prev.metrics) || []).map(([name, subject, base, unit, higher]) => {
        const v = now.get(`${name}\n${subject}`);
        if (v === undefined)
            return { name, subject, unit, baseline: base, now: null, change_percent: null, verdict: "NOT MEASURED" };
        const change = base !== 0 ? (v - base) / base * 100 : 0;
        const better = higher ? change : -change;
        const verdict = better < -THRESHOLD ? "REGRESSION" : better > THRESHOLD ? "IMPROVED" : "OK";
        return { name, subject, unit, baseline: base, now: v, change_percent: change, verdict };
    });
}

function verdictTable(title, metrics) {
    const pct = p => Number.isFinite(p) ? `${p >= 0 ? "+" : ""}${p.toFixed(0)} %` : "–";
    return [el("p", { id: "verdicts-against" }, title),
        el("table", { class: "hl-table hl-compact", id: "verdicts" },
           el("thead", {}, el("tr", {}, ["Metric", "Subject", "Reference", "Now", "Change", "Verdict"].map(h => el("th", {}, h)))),
           el("tbody", {}, metrics.map(m => el("tr", { "data-metric": m.name, "data-subject": m.subject, "data-verdict": m.verdict },
               el("td", {}, m.name), el("td", {}, m.subject || "–"),
               el("td", {}, figure(m.baseline, m.unit)), el("td", {}, figure(m.now ?? NaN, m.unit)),
               el("td", {}, pct(m.change_percent)),
               el("td", {}, el("span", { class: `hl-label hl-verdict-${m.verdict.replace(" ", "-").toLowerCase()}` }, m.verdict))))))];
}

// Compare's json with each metric's verdict as hlctl prints it.
function compared(c) {
    const json = JSON.parse(val(c.json));
    const words = val(c.verdicts) || [];
    json.metrics.forEach((m, i) => { m.verdict = words[i] ? words[i][2] : String(m.verdict) });
    return json;
}

function lastCheck(checks, comparison) {
    const box = document.getElementById("history-verdicts");
    if (!checks.length) {
        box.replaceChildren(el("p", { class: "hl-muted" }, "No check stored yet (hlctl check)."));
    } else if (comparison) {
        const when = `${utc(val(checks[0].ts))} UTC`;
        box.replaceChildren(...verdictTable(`The check of ${when} and the results since against baseline '${comparison.baseline}' (±${comparison.threshold_percent} %).`, comparison.metrics));
    } else if (checks.length > 1) {
        box.replaceChildren(...verdictTable(`Against the previous check (±${THRESHOLD} %).`, againstPrevious(checks[1], checks[0])));
    } else {
        box.replaceChildren(el("p", { class: "hl-muted" }, "No reference yet: it was the first check."));
    }
    box.dataset.loaded = "1";
}

function trends(rows, comparison) {
    const series = new Map();
    for (const r of rows) {
        for (const [name, subject, value, unit] of val(r.metrics) || []) {
            const key = keyOf(name, subject);
            if (!series.has(key))
                series.set(key, { unit, points: [] });
            series.get(key).points.push({ ts: val(r.ts), value });
        }
    }
    const base = new Map((comparison ? comparison.metrics : []).map(m => [keyOf(m.name, m.subject), m.baseline]));
    document.getElementById("history-baseline").textContent = comparison
        ? `Dashed red line: baseline '${comparison.baseline}'.`
        : "No baseline saved (hlctl baseline save NAME).";
    const charts = document.getElementById("history-charts");
    charts.replaceChildren(...[...series].slice(0, 60).map(([k, s]) => chart(k, s, base.get(k))));
    if (!rows.length)
        charts.replaceChildren(el("p", { class: "hl-muted" }, "Nothing stored yet: run a benchmark or a doctor with measurements."));
}

// The latest results as `hlctl history` prints them: the time in UTC, and
// every metric as "name value".
function table(rows) {
    document.querySelector("#history-table tbody").replaceChildren(...rows.slice(0, 30).map(r => el("tr", { "data-id": val(r.id), "data-kind": val(r.kind), "data-ts": val(r.ts) },
        el("td", {}, utc(val(r.ts))),
        el("td", {}, val(r.kind)),
        el("td", {}, val(r.interface) || "–"),
        el("td", {}, val(r.peer) || "–"),
        el("td", {}, (val(r.metrics) || []).map(m => `${m[0]} ${figure(m[2], m[3])}`).join(", ")))));
    document.getElementById("history-table").dataset.loaded = "1";
}

export async function loadHistory(client) {
    const call = (method, args) => client.call(...MANAGER, method, args).then(r => r[0]);
    try {
        const [rows, checks, baselines] = await Promise.all([
            call("ListHistory", [{ limit: { t: "u", v: 500 } }]),
            call("ListHistory", [{ kind: { t: "s", v: "check" }, limit: { t: "u", v: 2 } }]),
            call("ListBaselines", []),
        ]);
        const comparison = baselines.length ? compared(await call("Compare", ["", {}])) : null;
        lastCheck(checks, comparison);
        trends(rows, comparison);
        table(rows);
    } catch (err) {
        document.getElementById("history-charts").replaceChildren(el("p", { class: "hl-danger" }, errorText(err)));
        document.getElementById("history-table").dataset.loaded = "1";
    }
}
