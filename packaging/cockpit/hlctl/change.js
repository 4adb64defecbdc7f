// Changes through Link.ApplyChanges with a checkpoint (rollback_timeout_s):
// apply, let it settle, check the bus still answers, then Job.Confirm. If
// the browser is cut off first, the bridge leaves the bus and hlctld puts
// the old values back (as Cockpit's NetworkManager page does with NM
// checkpoints).
/* global cockpit */
import { el, errorText } from "./dom.js";
import { askFirst } from "./dialog.js";

const GROUPS = ["mtu", "txqueuelen", "gso-max-size", "feature", "ring", "pause", "link", "channels", "coalesce"];
const SINGLE = ["mtu", "txqueuelen", "gso-max-size"];
export const ROLLBACK_S = 30;
const SETTLE_MS = 1500;

function typed(word) {
    if (word === "on" || word === "off")
        return { t: "b", v: word === "on" };
    if (/^\d+$/.test(word))
        return { t: "u", v: Number(word) };
    return { t: "s", v: word };
}

// A doctor fix line `hlctl set IFACE GROUP KEY VALUE ...` as the interface
// and the ApplyChanges settings; null for any other line.
export function parseFix(line) {
    const w = line.trim().split(/\s+/);
    if (w[0] !== "hlctl" || w[1] !== "set" || w.length < 5)
        return null;
    const iface = w[2];
    const settings = {};
    let group = null;
    for (let i = 3; i < w.length; i++) {
        const word = w[i];
        if (word.startsWith("--"))
            continue;
        if (GROUPS.includes(word)) {
            group = word;
            if (SINGLE.includes(word))
                settings[word] = typed(w[++i]);
            continue;
        }
        if (!group || SINGLE.includes(group))
            return null;
        if (group === "link" && word === "advertise") {
            const modes = [];
            while (i + 1 < w.length && !GROUPS.includes(w[i + 1]) && !w[i + 1].startsWith("--"))
                modes.push(w[++i]);
            settings["link.advertise"] = { t: "as", v: modes };
            continue;
        }
        settings[`${group}.${word}`] = typed(w[++i]);
    }
    return Object.keys(settings).length ? { iface, settings } : null;
}

function rowsTable(rows) {
    return el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table change-rows" },
              el("thead", {}, el("tr", {}, ["Setting", "Before", "Requested", "After", "Status"].map(h => el("th", {}, h)), el("th", {}, el("span", { class: "hl-sr-only" }, "Note")))),
              el("tbody", {}, rows.map(r => el("tr", { "data-setting": r[0] }, r.map(c => el("td", {}, c))))));
}

function sleep(ms) {
    return new Promise(resolve => window.setTimeout(resolve, ms));
}

// Settings that may take the link down for a moment: a new MTU, link
// modes, and rings and channels, which many drivers apply by resetting
// the NIC.
const CUTTING = ["mtu", "link.", "ring.", "channels."];

export function mayCut(settings) {
    return Object.keys(settings).filter(k => CUTTING.some(c => k === c || (c.endsWith(".") && k.startsWith(c))));
}

// The question before such a change of link `name`: cancelled changes nothing.
export function askBeforeCut(name, keys) {
    return askFirst(`Change ${keys.join(", ")} of ${name}?`,
                    `This may take ${name} down for a moment (many drivers reset the NIC to apply it). ` +
                    `If this browser reaches the host through ${name}, the page may lose its connection; ` +
                    `hlctld then puts the old values back after ${ROLLBACK_S} s.`,
                    "Apply");
}

// Apply `settings` to the link at `path` (named `name`), checkpointed,
// after asking when it may cut the connection; report into `out`.
export async function applyWithCheckpoint(client, path, name, settings, out) {
    const risky = mayCut(settings);
    if (risky.length && !(await askBeforeCut(name, risky))) {
        out.replaceChildren(el("p", { class: "hl-status", "data-state": "cancelled" }, "Cancelled: nothing was changed."));
        return false;
    }
    out.replaceChildren(el("p", { class: "hl-status", "data-state": "applying" }, "Applying…"));
    let rows, summary;
    try {
        [rows, summary] = await client.call(path, "org.hlctl.Daemon1.Link", "ApplyChanges",
                                            [settings, { rollback_timeout_s: { t: "u", v: ROLLBACK_S } }]);
    } catch (err) {
        out.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err)));
        return false;
    }
    const job = summary.job && summary.job.v;
    out.replaceChildren(el("p", { class: "hl-status", "data-state": "testing" },
                           `Testing connection… (the change is undone in ${ROLLBACK_S} s unless confirmed)`),
                        rowsTable(rows));
    cockpit.hint("ignore_transport_health_check", { data: true });
    try {
        await sleep(SETTLE_MS);
        // The bus still answers through this browser's session: keep it.
        await client.call("/org/hlctl/Daemon1", "org.freedesktop.DBus.Peer", "Ping", []);
        if (job)
            await client.call(job, "org.hlctl.Daemon1.Job", "Confirm", []);
    } catch (err) {
        out.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" },
                               `Not confirmed, the change is rolled back: ${errorText(err)}`),
                            rowsTable(rows));
        return false;
    } finally {
        cockpit.hint("ignore_transport_health_check", { data: false });
    }
    out.replaceChildren(el("p", { class: "hl-status hl-success", "data-state": "confirmed" }, "Applied and confirmed."),
                        rowsTable(rows));
    return true;
}
