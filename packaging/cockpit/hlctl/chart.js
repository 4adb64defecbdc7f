// A trend chart drawn in SVG (no chart library): a series of timed values
// from 0 to its top, a reference as a dashed line (History's baseline, the
// usage chart's link speed), a time axis with dates, the value under the
// pointer or the arrow keys, and the same points as a table for screen
// readers.
import { el } from "./dom.js";
import { utc, value as figure } from "./units.js";

const SVG = "http://www.w3.org/2000/svg";
// The plot area inside the chart's viewBox: values on the left, dates below.
const W = 380;
const H = 150;
const PAD = { l: 80, r: 8, t: 8, b: 22 };

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

// `words`: what the reference and a point are called.
const RUNS = { ref: "baseline", one: "run", many: "runs" };

export function chart(key, s, base, words = RUNS) {
    const count = n => `${n} ${n === 1 ? words.one : words.many}`;
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
               svg("title", {}, `${words.ref} ${figure(base, s.unit)}`))];
    const axes = [
        svg("line", { x1: PAD.l, x2: W - PAD.r, y1: H - PAD.b, y2: H - PAD.b, class: "hl-chart-axis" }),
        svg("line", { x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: H - PAD.b, class: "hl-chart-axis" }),
        ...[0, top].map(v => svg("text", { x: PAD.l - 4, y: (y(v) + 3).toFixed(1), "text-anchor": "end", class: "hl-chart-tick" }, figure(v, s.unit))),
        ...dateTicks(points, x),
    ];
    const dots = points.map(p => svg("circle", { cx: x(p.ts).toFixed(1), cy: y(p.value).toFixed(1), r: 3, class: "hl-chart-dot", "data-ts": p.ts, "data-value": p.value },
                                     svg("title", {}, `${utc(p.ts)} UTC: ${figure(p.value, s.unit)}`)));
    const readout = el("output", { class: "hl-chart-readout", "aria-live": "polite" });
    readout.value = `Point at a ${words.one} for its date and value.`;
    const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", tabindex: 0, "aria-label": `${key}: ${count(points.length)} from ${utc(t0)} to ${utc(t1)} UTC; the table below lists them` },
                     ...axes, ...baseLine,
                     svg("polyline", { points: line, class: "hl-chart-line" }),
                     ...dots);
    pointer(plot, readout, dots, points, s.unit);
    return el("figure", { class: "hl-chart", "data-metric": key, "data-points": points.length },
              el("figcaption", {}, `${key}: ${figure(last.value, s.unit)} (${count(points.length)})`,
                 base === undefined ? null : el("span", { class: "hl-muted" }, ` · ${words.ref} ${figure(base, s.unit)}`)),
              plot, readout, runsTable(key, points, s.unit));
}
