// The History tab's transfers: this host's row of the host × host ×
// protocol matrix, from the results hlctld stored. Per peer (or mount)
// and protocol, the newest figure of each direction: raw TCP from a check,
// doctor or `bench net` ("net download" is the peer sending to this host),
// SSH, NFS and SMB from `bench file` ("file ssh read"), each in the unit
// `hlctl history` prints it in and with the time it was measured.
import { el, emptyState, val } from "./dom.js";
import { utc, value as figure } from "./units.js";

// A metric's place in the matrix: [protocol, "read" | "write"], or null.
function cellOf(name) {
    const net = /^net (download|upload)$/.exec(name);
    if (net)
        return ["tcp", net[1] === "download" ? "read" : "write"];
    const file = /^file (\S+) (read|write)$/.exec(name);
    return file ? [file[1], file[2]] : null;
}

// {subject, protocol, read, write} with each direction's newest
// {ts, value, unit}; rows come newest first, as ListHistory gives them.
export function matrix(rows) {
    const seen = new Map();
    for (const r of rows) {
        for (const [name, subject, value, unit] of val(r.metrics) || []) {
            const at = cellOf(name);
            if (!at || !subject)
                continue;
            const key = `${subject}\n${at[0]}`;
            if (!seen.has(key))
                seen.set(key, { subject, protocol: at[0], read: null, write: null });
            const row = seen.get(key);
            if (!row[at[1]])
                row[at[1]] = { ts: val(r.ts), value, unit };
        }
    }
    return [...seen.values()].sort((a, b) => a.subject.localeCompare(b.subject) || a.protocol.localeCompare(b.protocol));
}

function cell(dir, c) {
    return c
        ? el("td", { "data-dir": dir, "data-ts": c.ts }, figure(c.value, c.unit), el("span", { class: "hl-muted" }, ` (${utc(c.ts)})`))
        : el("td", { "data-dir": dir }, "–");
}

export function transfers(rows) {
    const box = document.getElementById("history-transfers");
    const m = matrix(rows);
    box.replaceChildren(m.length
        ? el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table", id: "transfers" },
             el("thead", {}, el("tr", {}, ["Peer or place", "Protocol", "Read (to this host)", "Write (from this host)"].map(h => el("th", { scope: "col" }, h)))),
             el("tbody", {}, m.map(r => el("tr", { "data-subject": r.subject, "data-protocol": r.protocol },
                 el("td", {}, r.subject), el("td", {}, r.protocol.toUpperCase()),
                 cell("read", r.read), cell("write", r.write)))))
        : emptyState("No transfer measured yet", ["Run ", el("code", {}, "hlctl bench net"), ", ", el("code", {}, "hlctl bench file"), " or a check with peers."]));
    box.dataset.loaded = "1";
}
