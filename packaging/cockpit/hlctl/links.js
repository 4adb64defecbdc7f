// The Links tab: every link from the ObjectManager's Link proxies, kept up
// to date by PropertiesChanged; live RX/TX rates from the Counters the
// daemon announces at the rate asked with Manager.SetCountersRefresh.
import { el, label, val } from "./dom.js";
import { bps as rate, speed } from "./units.js";
import { gate } from "./access.js";
import { applyWithCheckpoint } from "./change.js";

const MANAGER = "/org/hlctl/Daemon1";
const REFRESH_MS = 1000;
// ethtool's short names of the offloads a NAS cares about.
const OFFLOADS = [["tso", "tx-tcp-segmentation"], ["gso", "tx-generic-segmentation"],
    ["gro", "rx-gro"], ["sg", "tx-scatter-gather"], ["rx-csum", "rx-checksum"]];

const rates = {}; // path -> {t, rx, tx, rxBps, txBps}

// The fastest supported mode: "1000baseT/Full" -> {speed: 1000, duplex: "full"}.
export function bestMode(modes) {
    let best = null;
    for (const m of modes || []) {
        const r = /^(\d+)base[^/]*\/(Full|Half)$/.exec(m);
        if (!r)
            continue;
        const s = { speed: Number(r[1]), duplex: r[2].toLowerCase() };
        if (!best || s.speed > best.speed || (s.speed === best.speed && s.duplex === "full"))
            best = s;
    }
    return best;
}

function speedCell(p) {
    const best = bestMode(val((p.LinkModes || {}).supported));
    const now = p.Speed ? `${speed(p.Speed)} ${p.Duplex || ""}`.trim() : "–";
    const below = best && p.Speed && (p.Speed < best.speed || (p.Duplex === "half" && best.duplex === "full"));
    return el("td", { "data-field": "speed", "data-speed": p.Speed || 0, "data-duplex": p.Duplex || "" },
              now,
              best ? " " : null,
              best && below ? label(`below ${speed(best.speed)} ${best.duplex}`, "orange", { "data-field": "best" }) : null,
              best && !below ? el("span", { class: "hl-muted", "data-field": "best" }, `(best ${speed(best.speed)})`) : null);
}

function ringsCell(r) {
    if (!r || r.rx === undefined)
        return el("td", { "data-field": "rings" }, "–");
    const one = k => r[k] === undefined ? "–" : `${r[k]}/${r[`${k}-max`] ?? "?"}`;
    return el("td", { "data-field": "rings", "data-rx": r.rx, "data-rx-max": r["rx-max"], "data-tx": r.tx, "data-tx-max": r["tx-max"] },
              `${one("rx")} · ${one("tx")}`);
}

function offloadsCell(f) {
    const parts = OFFLOADS.filter(([, k]) => f && f[k]).map(([short, k]) =>
        el("span", { class: f[k][0] ? "hl-chip hl-on" : "hl-chip hl-off", "data-feature": k, "data-on": f[k][0] ? "1" : "0" },
           `${short} ${f[k][0] ? "on" : "off"}`));
    return el("td", { "data-field": "offloads" }, parts.length ? parts : "–");
}

function pauseCell(pause) {
    const [auto, rx, tx] = pause || [false, false, false];
    return el("td", { "data-field": "pause" }, `rx ${rx ? "on" : "off"} · tx ${tx ? "on" : "off"}${auto ? " (auto)" : ""}`);
}

function row(path, p) {
    const r = rates[path] || {};
    return el("tr", { "data-link": p.Name, "data-path": path },
              el("th", { scope: "row" }, p.Name, p.HeldBy ? el("div", { class: "hl-muted" }, `held by ${p.HeldBy}`) : null),
              el("td", { "data-field": "state" }, p.OperState),
              el("td", { "data-field": "driver" }, p.Driver || "–"),
              speedCell(p),
              el("td", { "data-field": "mtu" }, p.Mtu),
              ringsCell(p.Rings),
              offloadsCell(p.Features),
              pauseCell(p.Pause),
              el("td", { "data-field": "rx-rate", "data-bps": r.rxBps ?? "" }, rate(r.rxBps)),
              el("td", { "data-field": "tx-rate", "data-bps": r.txBps ?? "" }, rate(r.txBps)));
}

function noteCounters(path, p) {
    const c = p.Counters;
    if (!c)
        return;
    const now = performance.now();
    const last = rates[path];
    const next = { t: now, rx: c["rx-bytes"], tx: c["tx-bytes"] };
    if (last && now > last.t) {
        const dt = (now - last.t) / 1000;
        next.rxBps = Math.max(0, (next.rx - last.rx) * 8 / dt);
        next.txBps = Math.max(0, (next.tx - last.tx) * 8 / dt);
    }
    rates[path] = next;
}

export function startLinks(client) {
    const links = client.proxies("org.hlctl.Daemon1.Link", MANAGER);
    const body = document.querySelector("#links-table tbody");
    const select = document.getElementById("mtu-link");
    const render = () => {
        const paths = Object.keys(links).filter(k => links[k] && links[k].valid)
                .sort((a, b) => links[a].Ifindex - links[b].Ifindex);
        body.replaceChildren(...paths.map(k => row(k, links[k])));
        const chosen = select.value;
        select.replaceChildren(...paths.map(k => el("option", { value: k, selected: k === chosen }, links[k].Name)));
        document.getElementById("links-table").dataset.loaded = "1";
    };
    links.addEventListener("changed", (ev, proxy) => { noteCounters(proxy.path, proxy); render() });
    links.addEventListener("added", render);
    links.addEventListener("removed", render);
    links.wait().then(() => {
        for (const k of Object.keys(links))
            noteCounters(k, links[k]);
        render();
    });
    // Counters come announced at this rate while this page is open.
    client.call(MANAGER, "org.hlctl.Daemon1.Manager", "SetCountersRefresh", [REFRESH_MS]).catch(() => {});

    const form = document.getElementById("mtu-form");
    select.addEventListener("change", () => {
        const p = links[select.value];
        if (p)
            document.getElementById("mtu-value").value = p.Mtu;
    });
    form.addEventListener("submit", ev => {
        ev.preventDefault();
        const mtu = Number(document.getElementById("mtu-value").value);
        const out = document.getElementById("change-result");
        const button = document.getElementById("mtu-apply");
        button.disabled = true;
        const name = links[select.value] ? links[select.value].Name : select.value;
        applyWithCheckpoint(client, select.value, name, { mtu: { t: "u", v: mtu } }, out)
                .finally(() => gate(form));
    });
    return links;
}
