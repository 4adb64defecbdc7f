// The History tab: ListHistory's rows as a trend chart per metric (SVG,
// drawn here: no chart library) and a table of the latest results.
import { el, errorText, val } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 320;
const H = 120;

function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs))
        e.setAttribute(k, String(v));
    e.append(...children);
    return e;
}

function chart(name, unit, points) {
    points.sort((a, b) => a.ts - b.ts);
    const vs = points.map(p => p.value);
    const lo = Math.min(...vs);
    const hi = Math.max(...vs);
    const t0 = points[0].ts;
    const t1 = points[points.length - 1].ts;
    const x = ts => t1 === t0 ? W / 2 : 8 + (ts - t0) / (t1 - t0) * (W - 16);
    const y = v => hi === lo ? H / 2 : H - 8 - (v - lo) / (hi - lo) * (H - 16);
    const line = points.map(p => `${x(p.ts).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
    const last = points[points.length - 1];
    return el("figure", { class: "hl-chart", "data-metric": name },
              el("figcaption", {}, `${name}: ${last.value.toPrecision(4)} ${unit} (${points.length} runs, ${lo.toPrecision(3)}–${hi.toPrecision(3)})`),
              svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": name },
                  svg("polyline", { points: line, class: "hl-chart-line" }),
                  ...points.map(p => svg("circle", { cx: x(p.ts), cy: y(p.value), r: 2.5, class: "hl-chart-dot" }))));
}

export async function loadHistory(client) {
    const charts = document.getElementById("history-charts");
    const body = document.querySelector("#history-table tbody");
    let rows;
    try {
        [rows] = await client.call("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "ListHistory",
                                   [{ limit: { t: "u", v: 200 } }]);
    } catch (err) {
        charts.replaceChildren(el("p", { class: "hl-danger" }, errorText(err)));
        return;
    }
    const series = new Map();
    for (const r of rows) {
        for (const [name, subject, value, unit] of val(r.metrics) || []) {
            const key = subject ? `${name} ${subject}` : name;
            if (!series.has(key))
                series.set(key, { unit, points: [] });
            series.get(key).points.push({ ts: val(r.ts), value });
        }
    }
    charts.replaceChildren(...[...series].slice(0, 12).map(([k, s]) => chart(k, s.unit, s.points)));
    if (!rows.length)
        charts.replaceChildren(el("p", { class: "hl-muted" }, "Nothing stored yet: run a benchmark or a doctor with measurements."));
    body.replaceChildren(...rows.slice(0, 30).map(r => el("tr", { "data-id": val(r.id) },
        el("td", {}, new Date(val(r.ts) * 1000).toLocaleString()),
        el("td", {}, val(r.kind)),
        el("td", {}, val(r.interface) || "–"),
        el("td", {}, val(r.peer) || "–"),
        el("td", {}, (val(r.metrics) || []).slice(0, 3).map(m => `${m[0]} ${m[2].toPrecision(4)} ${m[3]}`).join(", ")))));
    document.getElementById("history-table").dataset.loaded = "1";
}
