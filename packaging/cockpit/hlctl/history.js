// The History tab, the content of `hlctl history --html` drawn in the page:
// the last check's verdict per metric, a trend chart per metric (SVG, drawn
// here: no chart library) with the newest baseline as a dashed line, and a
// table of the latest results. Everything is read from hlctld:
// ListHistory, ListBaselines and Compare (all open to everyone).
import { el, emptyState, errorText, val, verdictLabel } from "./dom.js";
import { chart } from "./chart.js";
import { transfers } from "./transfers.js";
import { utc, value as figure } from "./units.js";

const MANAGER = ["/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager"];
// hlctl check's default: a change beyond this (percent) is a verdict.
const THRESHOLD = 10;

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
        el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table", id: "verdicts" },
           el("thead", {}, el("tr", {}, ["Metric", "Subject", "Reference", "Now", "Change", "Verdict"].map(h => el("th", {}, h)))),
           el("tbody", {}, metrics.map(m => el("tr", { "data-metric": m.name, "data-subject": m.subject, "data-verdict": m.verdict },
               el("td", {}, m.name), el("td", {}, m.subject || "–"),
               el("td", {}, figure(m.baseline, m.unit)), el("td", {}, figure(m.now ?? NaN, m.unit)),
               el("td", {}, pct(m.change_percent)),
               el("td", {}, verdictLabel(m.verdict))))))];
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
        box.replaceChildren(emptyState("No check stored yet", ["Run ", el("code", {}, "hlctl check"), " or Run check now on the Overview."]));
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
        transfers(rows);
        table(rows);
    } catch (err) {
        document.getElementById("history-charts").replaceChildren(el("p", { class: "hl-danger" }, errorText(err)));
        document.getElementById("history-table").dataset.loaded = "1";
    }
}
