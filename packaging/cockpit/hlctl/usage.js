// The Overview's link usage card: per sampled link, the highest received
// and sent rate of each hour over 1, 7 or 30 days (`hlctl usage --days N`,
// Manager.Usage, open to everyone), the link's speed as the dashed line,
// and usage's verdict in words.
import { el, emptyState, errorText, val } from "./dom.js";
import { chart } from "./chart.js";

const MANAGER = ["/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager"];
const HOURS = { ref: "link speed", one: "hour", many: "hours" };

function linkCharts(l) {
    const speed = l.span.speed_bps > 0 ? l.span.speed_bps : undefined;
    const series = dir => ({ unit: "bit/s", points: l.hourly_peaks.map(h => ({ ts: h.start, value: h[`${dir}_bps`] })) });
    return el("div", { class: "hl-usage-link", "data-link": l.iface, "data-faster": l.verdict.faster_helps ? "1" : "0" },
              el("h3", {}, l.iface),
              el("p", { "data-field": "verdict" }, l.verdict.text),
              l.hourly_peaks.length
                  ? el("div", { class: "hl-charts" },
                       chart(`${l.iface} received`, series("rx"), speed, HOURS),
                       chart(`${l.iface} sent`, series("tx"), speed, HOURS))
                  : null);
}

async function draw(client, days, box) {
    box.dataset.loaded = "";
    try {
        const [u] = await client.call(...MANAGER, "Usage", ["", { days: { t: "u", v: days } }]);
        const answer = JSON.parse(val(u.json));
        box.replaceChildren(...answer.links.map(linkCharts));
        if (!answer.links.length)
            box.replaceChildren(emptyState("No usage sampled yet", "hlctld samples every physical link every 10 s."));
    } catch (err) {
        box.replaceChildren(el("p", { class: "hl-muted" }, errorText(err)));
    }
    box.dataset.days = days;
    box.dataset.loaded = "1";
}

// Draws the card now and whenever the days change; returns a redraw.
export function startUsage(client) {
    const pick = document.getElementById("usage-days");
    const box = document.getElementById("usage-charts");
    const redraw = () => draw(client, Number(pick.value), box);
    pick.addEventListener("change", redraw);
    return redraw;
}
