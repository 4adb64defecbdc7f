// The Overview tab, the owner's questions on one screen: per link its speed
// against what it supports and `hlctl usage`'s upgrade verdict; the last
// check against the newest baseline (`hlctl compare`); "Run check now"
// (Manager.Check as a job, with its progress); each link's usage chart
// (usage.js). Reads are open to everyone;
// the check needs run-benchmark (the button is gated as every change).
import { el, errorText, label, spinning, val, verdictLabel } from "./dom.js";
import { gate } from "./access.js";
import { bestMode } from "./links.js";
import { jobDone } from "./jobs.js";
import { speed, utc } from "./units.js";
import { startUsage } from "./usage.js";

const MANAGER = ["/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager"];
// The usage window the verdicts speak of (`hlctl usage`'s default).
const USAGE_DAYS = 30;

// "100 Mbit/s full, below the 1 Gbit/s full it supports" (or "the fastest
// it supports", or the speed alone when the driver lists no modes).
function speedVerdict(p) {
    if (!p.Speed)
        return { text: "no link speed (down, or not reported)", below: false };
    const now = `${speed(p.Speed)} ${p.Duplex || ""}`.trim();
    const best = bestMode(val((p.LinkModes || {}).supported));
    if (!best)
        return { text: now, below: false };
    const below = p.Speed < best.speed || (p.Duplex === "half" && best.duplex === "full");
    return {
        text: below ? `${now}, below the ${speed(best.speed)} ${best.duplex} it supports` : `${now}, the fastest it supports`,
        below,
        best,
    };
}

// Usage's verdict per link name, or the reason there is none.
async function usageVerdicts(call) {
    try {
        const u = await call("Usage", ["", { days: { t: "u", v: USAGE_DAYS } }]);
        const names = val(u.links) || [];
        const words = val(u.verdicts) || [];
        const faster = val(u.faster_helps) || [];
        return { byLink: new Map(names.map((n, i) => [n, { text: words[i], faster: faster[i] }])) };
    } catch (err) {
        return { byLink: new Map(), error: errorText(err) };
    }
}

// A link worth a line: one with a speed, with modes its NIC supports (a
// physical link that is down), or with usage samples (hlctld samples
// physical links only); loopback, dummies, bridges and bonds without a
// speed are named once below the table instead.
function worthALine(p, usage) {
    return !!p.Speed || !!bestMode(val((p.LinkModes || {}).supported)) || usage.byLink.has(p.Name);
}

function linkRows(links, usage) {
    const paths = Object.keys(links).filter(k => links[k] && links[k].valid)
            .sort((a, b) => links[a].Ifindex - links[b].Ifindex);
    const others = paths.filter(k => !worthALine(links[k], usage)).map(k => links[k].Name);
    document.getElementById("overview-others").textContent = others.length
        ? `Without a speed (virtual, or down without a NIC's modes): ${others.join(", ")}.`
        : "";
    return paths.filter(k => worthALine(links[k], usage)).map(k => {
        const p = links[k];
        const s = speedVerdict(p);
        const u = usage.byLink.get(p.Name);
        return el("tr", { "data-link": p.Name, "data-speed": p.Speed || 0, "data-below": s.below ? "1" : "0", "data-best": s.best ? s.best.speed : "" },
                  el("th", { scope: "row" }, p.Name),
                  el("td", { "data-field": "speed" }, s.below ? label(s.text, "orange") : s.text),
                  el("td", { "data-field": "usage", "data-faster": u ? (u.faster ? "1" : "0") : "" },
                     u ? u.text : el("span", { class: "hl-muted" }, usage.error || "no samples of this link yet (hlctld samples physical links every 10 s)")));
    });
}

// The newest check against the newest baseline, as `hlctl compare` says it.
async function checkLine(call) {
    const [checks, baselines] = await Promise.all([
        call("ListHistory", [{ kind: { t: "s", v: "check" }, limit: { t: "u", v: 1 } }]),
        call("ListBaselines", []),
    ]);
    const box = document.getElementById("overview-check");
    if (!checks.length) {
        box.replaceChildren(el("p", { class: "hl-muted", "data-regressions": "" }, "No check stored yet: run one below, or let hlctl-check.timer run it."));
        return;
    }
    const when = `${utc(val(checks[0].ts))} UTC`;
    if (!baselines.length) {
        box.replaceChildren(el("p", { "data-regressions": "" }, `Last check ${when}; no baseline saved to judge it against (hlctl baseline save NAME).`));
        return;
    }
    const c = JSON.parse(val((await call("Compare", ["", {}])).json));
    const bad = c.metrics.filter(m => String(m.verdict).toUpperCase() === "REGRESSION");
    const text = bad.length
        ? `${bad.length} ${bad.length === 1 ? "regression" : "regressions"} against baseline '${c.baseline}' (±${c.threshold_percent} %): ${bad.map(m => m.subject ? `${m.name} → ${m.subject}` : m.name).join(", ")}.`
        : `No regression against baseline '${c.baseline}' (±${c.threshold_percent} %).`;
    box.replaceChildren(el("p", { "data-regressions": bad.length, "data-baseline": c.baseline },
                           verdictLabel(bad.length ? "REGRESSION" : "OK"),
                           ` Last check ${when}. ${text}`));
}

async function load(client, links) {
    const call = (method, args) => client.call(...MANAGER, method, args).then(r => r[0]);
    const table = document.getElementById("overview-links");
    try {
        const usage = await usageVerdicts(call);
        table.querySelector("tbody").replaceChildren(...linkRows(links, usage));
        await checkLine(call);
    } catch (err) {
        document.getElementById("overview-check").replaceChildren(el("p", { class: "hl-danger" }, errorText(err)));
    }
    table.dataset.loaded = "1";
}

async function runCheck(client, links) {
    const button = document.getElementById("overview-run-check");
    const progress = document.getElementById("overview-progress");
    button.disabled = true;
    progress.replaceChildren(spinning("Starting the check…"));
    try {
        const [path] = await client.call(...MANAGER, "Check", [{}]);
        const [state, json] = await jobDone(client, path, job => {
            const pct = job.ProgressValid ? ` ${Math.round(job.Progress * 100)} %` : "";
            progress.replaceChildren(spinning(`${job.Message || "Running"}${pct}`));
        });
        const out = JSON.parse(json);
        if (state !== "succeeded" || out.error)
            throw new Error(out.error || state);
        // The line redrawn first: "done" means the page shows the new check.
        await load(client, links);
        progress.replaceChildren(el("p", { class: "hl-status", "data-state": "done" }, "The check ran and was stored."));
    } catch (err) {
        progress.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err)));
    } finally {
        gate(document.getElementById("tab-overview"));
    }
}

export function startOverview(client, links) {
    document.getElementById("overview-run-check").addEventListener("click", () => runCheck(client, links));
    const usage = startUsage(client);
    const reload = () => { load(client, links); usage() };
    links.wait().then(reload);
    return reload;
}
