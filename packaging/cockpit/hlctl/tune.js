// The Tune tab: a tune of one link against a peer as a job (plan with a dry
// run, or for real), its progress, then commit-confirm in the page: the
// kept changes wait for "Keep"; without it (tab closed, "Roll back", the
// deadline) hlctld rolls them back. Then the steps: before, tried, Δ,
// KEPT or reverted.
import { el, errorText, spinner, verdictLabel } from "./dom.js";
import { bps as rate } from "./units.js";
import { gate } from "./access.js";
import { jobDone } from "./jobs.js";
import { askFirst } from "./dialog.js";

const JOB = "org.hlctl.Daemon1.Job";

function stepsTable(report) {
    const delta = s => s.deltas.map(d => `${d.direction} ${rate(d.before_bps)} → ${rate(d.after_bps)} (${d.change_percent >= 0 ? "+" : ""}${d.change_percent.toFixed(1)} %)`).join("; ");
    return el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table", id: "tune-steps" },
              el("thead", {}, el("tr", {}, ["Step", "Before", "Tried", "Δ", "Result", "Why"].map(h => el("th", {}, h)))),
              el("tbody", {}, (report.steps || []).map(s => el("tr", { "data-step": s.candidate, "data-status": s.status },
                  el("td", {}, s.title || s.candidate),
                  el("td", {}, s.settings.map(r => `${r.setting} ${r.before}`).join(", ")),
                  el("td", {}, s.settings.map(r => `${r.setting} ${r.tried}`).join(", ")),
                  el("td", {}, delta(s) || "–"),
                  el("td", {}, verdictLabel(s.status === "kept" ? "KEPT" : s.status)),
                  el("td", { class: "hl-muted" }, s.reason)))));
}

function confirmBox(client, path, out) {
    const keep = el("button", {
        type: "button", class: "pf-c-button pf-m-primary", "data-change": "1", id: "tune-keep",
        onclick: () => client.call(path, JOB, "Confirm", []).catch(e => out.append(el("p", { class: "hl-danger" }, errorText(e))))
    }, "Keep these settings");
    const back = el("button", {
        type: "button", class: "pf-c-button pf-m-secondary", "data-change": "1", id: "tune-rollback",
        onclick: () => client.call(path, JOB, "Cancel", []).catch(e => out.append(el("p", { class: "hl-danger" }, errorText(e))))
    }, "Roll back");
    return el("div", { class: "hl-form", id: "tune-confirm" },
              el("strong", {}, "Keep the kept changes? Without an answer they are rolled back."), keep, back);
}

export function startTune(client, links) {
    const form = document.getElementById("tune-form");
    const progress = document.getElementById("tune-progress");
    const result = document.getElementById("tune-result");
    const select = document.getElementById("tune-link");
    const fill = () => {
        const names = Object.keys(links).filter(k => links[k].valid && links[k].Name !== "lo")
                .sort((a, b) => links[a].Ifindex - links[b].Ifindex).map(k => links[k].Name);
        const chosen = select.value;
        if (select.options.length !== names.length)
            select.replaceChildren(...names.map(n => el("option", { value: n, selected: n === chosen }, n)));
    };
    links.addEventListener("changed", fill);
    links.addEventListener("added", fill);
    links.wait().then(fill);
    form.addEventListener("submit", async ev => {
        ev.preventDefault();
        const run = document.getElementById("tune-run");
        run.disabled = true;
        result.replaceChildren();
        const v = id => document.getElementById(id);
        const options = {
            interface: { t: "s", v: select.value },
            peer: { t: "s", v: v("tune-peer").value.trim() },
            runs: { t: "u", v: Number(v("tune-runs").value) },
            time_s: { t: "u", v: Number(v("tune-time").value) },
            no_mtu: { t: "b", v: v("tune-no-mtu").checked },
            dry_run: { t: "b", v: v("tune-dry").checked },
        };
        // Only one way measured and decided on (`hlctl tune --direction`).
        if (v("tune-direction").value !== "both") {
            options.direction = { t: "s", v: v("tune-direction").value };
        }
        // The job's message, and apart from it (not redrawn with every
        // message) the question while kept changes await confirmation.
        if (!options.dry_run.v && !(await askFirst(
            `Tune ${select.value}?`,
            `The tune tries changes on ${select.value} one at a time${options.no_mtu.v ? "" : " (the MTU among them)"}, ` +
            "and some (rings, channels, the MTU) may take the link down for a moment. Each change that does not help is " +
            "put back at once; the kept ones wait for your Keep and are rolled back without it.",
            "Tune"))) {
            progress.replaceChildren(el("p", { class: "hl-status", "data-state": "cancelled" }, "Cancelled: nothing was changed."));
            gate(form);
            return;
        }
        const line = el("p", { class: "hl-status" });
        const say = text => line.replaceChildren(spinner(), ` ${text}`);
        const ask = el("div");
        progress.replaceChildren(line, ask);
        try {
            const [path] = await client.call("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "Tune", [options]);
            const [state, json] = await jobDone(client, path, job => {
                say(job.Message || job.State);
                line.dataset.state = job.State;
                const waiting = job.State === "awaiting-confirmation";
                if (waiting && !ask.firstChild) {
                    ask.append(confirmBox(client, path, ask));
                    gate(ask);
                } else if (!waiting) {
                    ask.replaceChildren();
                }
            });
            const report = JSON.parse(json);
            if (report.error)
                throw new Error(report.error);
            progress.replaceChildren(el("p", { class: "hl-status", "data-state": state, "data-outcome": report.outcome || "" },
                                        `Tune ${state}: ${report.outcome || ""}`));
            result.replaceChildren(stepsTable(report),
                                   el("ul", { id: "tune-notes" }, (report.notes || []).map(n => el("li", {}, n))));
            result.dataset.loaded = "1";
        } catch (err) {
            progress.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err)));
        } finally {
            gate(form);
        }
    });
}
