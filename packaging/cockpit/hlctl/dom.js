// Small DOM helpers and the dark theme, as Cockpit's own pages do it.
/* global cockpit */

// el("td", {class: "x", "data-field": "mtu"}, "1500", child, ...)
export function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === false || v === null || v === undefined)
            continue;
        if (k === "onclick")
            e.addEventListener("click", v);
        else
            e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
        if (c === null || c === undefined)
            continue;
        e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
}

// PatternFly's spinner, for a job that runs (its status line says what runs).
export function spinner() {
    return el("span", { class: "pf-c-spinner pf-m-sm hl-spinner", "aria-hidden": "true" },
              el("span", { class: "pf-c-spinner__clipper" }),
              el("span", { class: "pf-c-spinner__lead-ball" }),
              el("span", { class: "pf-c-spinner__tail-ball" }));
}

// PatternFly's label: `color` one of its names (red, orange, green, blue)
// or none for grey; `attrs` on the label itself.
export function label(text, color, attrs) {
    return el("span", { ...attrs, class: `pf-c-label pf-m-compact${color ? ` pf-m-${color}` : ""}` },
              el("span", { class: "pf-c-label__content" }, text));
}

// The colour of each word hlctl judges with: compare's verdicts, doctor's
// severities, a tune step's status, a workload's verdict.
const COLORS = {
    REGRESSION: "red", IMPROVED: "green", critical: "red", warning: "orange", info: "blue",
    KEPT: "blue", carries: "green", "does not carry": "red",
};

export function verdictLabel(word, attrs) {
    const key = Object.keys(COLORS).find(k => word === k || word.startsWith(`${k} `));
    return label(word, key ? COLORS[key] : null, attrs);
}

// PatternFly's empty state, small: what is missing and what makes it appear.
export function emptyState(title, body) {
    return el("div", { class: "pf-c-empty-state pf-m-sm hl-empty" },
              el("div", { class: "pf-c-empty-state__content" },
                 el("h3", { class: "pf-c-title pf-m-md" }, title),
                 body ? el("div", { class: "pf-c-empty-state__body" }, body) : null));
}

// A status line with the spinner before `text`.
export function spinning(text) {
    return el("p", { class: "hl-status" }, spinner(), ` ${text}`);
}

// An error as the daemon phrased it: "Busy: eth0 is held by ...".
export function errorText(err) {
    if (!err)
        return "";
    const name = err.name ? String(err.name).split(".").pop() : (err.problem || "");
    const msg = err.message || String(err);
    return name && !msg.startsWith(name) ? `${name}: ${msg}` : msg;
}

export function showError(err) {
    document.getElementById("error-alert").textContent = errorText(err);
    document.getElementById("error-box").hidden = !err;
}

// pf-theme-dark on <html>, from the shell's choice (localStorage shell:style)
// or the system's (prefers-color-scheme), kept in step with both.
export function followTheme() {
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    const apply = () => {
        const style = localStorage.getItem("shell:style") || "auto";
        const dark = style === "dark" || (style === "auto" && media.matches);
        document.documentElement.classList.toggle("pf-theme-dark", dark);
    };
    apply();
    media.addEventListener("change", apply);
    window.addEventListener("storage", ev => { if (ev.key === "shell:style") apply() });
    window.addEventListener("cockpit-style", apply);
}

// Each body cell of a table with its column's header as data-label, for
// the narrow layout (hlctl.css) that stacks a row's cells, each under its
// name, as Cockpit's own tables collapse on a phone.
export function labelCells(root) {
    for (const t of (root || document).querySelectorAll("table.hl-table")) {
        const heads = [...t.querySelectorAll("thead th")].map(th => th.textContent.trim());
        for (const tr of t.querySelectorAll("tbody tr"))
            [...tr.cells].forEach((c, i) => { if (heads[i] && c.dataset.label !== heads[i]) c.dataset.label = heads[i] });
    }
}

// labelCells whenever the page redraws a table.
export function watchTables() {
    let queued = false;
    new MutationObserver(() => {
        if (queued)
            return;
        queued = true;
        requestAnimationFrame(() => { queued = false; labelCells() });
    }).observe(document.body, { childList: true, subtree: true });
    labelCells();
}

// The value of a variant ({t, v}) or the value itself.
export function val(x) {
    return x && typeof x === "object" && "v" in x && "t" in x ? x.v : x;
}
