// Who may change things: administrative access (Cockpit's superuser
// bridge), or a member of the hlctl group (the package's polkit rule lets
// the group through without a password). In limited access a polkit
// password prompt cannot be answered (Cockpit 287's agent only answers its
// own root-bridge action), so the change buttons are disabled instead.
/* global cockpit */

export const access = { canChange: false, reason: "Checking access…", listeners: [] };

export const LIMITED_REASON =
    "Turn on administrative access (or join the hlctl group) to change settings.";

function update(current, groups) {
    const admin = current !== "none" && current !== "init" && current !== undefined;
    const member = groups.includes("hlctl");
    access.canChange = admin || member;
    access.reason = access.canChange ? "" : LIMITED_REASON;
    const alert = document.getElementById("limited-alert");
    alert.hidden = admin || current === "init" || current === undefined;
    document.getElementById("limited-text").textContent =
        member ? "You are in the hlctl group: changes are allowed." : LIMITED_REASON;
    for (const f of access.listeners)
        f();
}

// Disable (or enable) every change button under `root`, with the reason in
// its title and next to it.
export function gate(root) {
    for (const b of (root || document).querySelectorAll("[data-change]")) {
        b.disabled = !access.canChange;
        b.title = access.reason;
        const r = b.nextElementSibling;
        if (r && r.classList.contains("hl-reason"))
            r.textContent = access.reason;
    }
}

export function watchAccess() {
    let groups = [];
    let current;
    const internal = cockpit.dbus(null, { bus: "internal" });
    const su = internal.proxy("cockpit.Superuser", "/superuser");
    const first = su.Current;
    su.addEventListener("changed", () => {
        // A channel keeps the privilege it was opened with: start afresh.
        if (current !== undefined && current !== "init" && su.Current !== current)
            window.location.reload();
        current = su.Current;
        update(current, groups);
        gate();
    });
    const user = cockpit.user().then(u => { groups = u.groups || [] });
    return Promise.all([su.wait(), user]).then(() => {
        current = su.Current ?? first;
        update(current, groups);
        gate();
    });
}
