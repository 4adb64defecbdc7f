// The Stacks card of the Links tab: every bridge or bond with its ports or
// slaves, nested as the kernel has them (eth2, eth3 -> bond0 -> vmbr0), in
// `hlctl show`'s words. The Link objects carry no relations, so this reads
// Manager.DescribeLinks (the JSON of `hlctl show`, its `stack`), again
// whenever a link comes or goes.
import { el, emptyState, errorText } from "./dom.js";

// One member as `hlctl show` says it (nic/stack.rs StackMember::describe):
// "br0: bridge, ports dum0 bond0", "bond0: active-backup, slaves dum1,
// active dum1; port of br0 (forwarding)".
export function describe(m) {
    const parts = [];
    const upper = (m.lowers || []).length > 0 || m.kind === "bridge" || m.kind === "bond";
    if (upper) {
        const kind = m.kind || "upper device";
        const [what, role] = kind === "bond" ? [m.bond_mode || "bond", "slaves"] : [kind, "ports"];
        let s = `${what}, ${m.lowers.length ? `${role} ${m.lowers.join(" ")}` : `no ${role}`}`;
        if (m.active_slave)
            s += `, active ${m.active_slave}`;
        parts.push(s);
    }
    if (m.master) {
        let s = `${m.master_kind === "bond" ? "slave" : "port"} of ${m.master}`;
        if (m.port_state)
            s += ` (${m.port_state})`;
        parts.push(s);
    }
    return `${m.name}: ${parts.join("; ")}`;
}

function stackCard(s) {
    const bonds = s.members.filter(m => m.kind === "bond");
    return el("div", { class: "hl-stack", "data-stack": s.top },
              el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table" },
                 el("thead", {}, el("tr", {}, ["Device", "Kind", "In the stack", "MTU"].map(h => el("th", {}, h)))),
                 el("tbody", {}, s.members.map(m => el("tr", { "data-member": m.name, "data-master": m.master || "" },
                     el("th", { scope: "row" }, m.name),
                     el("td", {}, m.kind || "NIC"),
                     el("td", { "data-field": "describe" }, describe(m).slice(m.name.length + 2)),
                     el("td", {}, m.mtu))))),
              bonds.map(b => el("p", { class: "hl-muted" },
                                `The speed ${b.name} reports is the sum of its active slaves' links (real, but one TCP stream rides one slave).`)));
}

export function startStacks(client, links) {
    const box = document.getElementById("stacks");
    let pending = null;
    const load = () => {
        pending = null;
        client.call("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "DescribeLinks", [[]])
                .then(([json]) => {
                    const stacks = new Map();
                    for (const i of JSON.parse(json))
                        if (i.stack && !stacks.has(i.stack.top))
                            stacks.set(i.stack.top, i.stack);
                    box.replaceChildren(...(stacks.size
                        ? [...stacks.values()].map(stackCard)
                        : [emptyState("No bridge or bond on this host")]));
                    box.dataset.loaded = "1";
                })
                .catch(err => {
                    box.replaceChildren(el("p", { class: "hl-danger" }, errorText(err)));
                    box.dataset.loaded = "1";
                });
    };
    // Links come and go in bursts (a bridge and its ports): read once after.
    const later = () => { if (!pending) pending = window.setTimeout(load, 500) };
    links.addEventListener("added", later);
    links.addEventListener("removed", later);
    load();
}
