// The Doctor tab: run it as a job, show its progress, then its findings by
// severity with evidence and the fix; a fix hlctl can apply is a button
// that applies it through ApplyChanges with a checkpoint.
import { el, errorText, spinning, verdictLabel } from "./dom.js";
import { gate } from "./access.js";
import { applyWithCheckpoint, parseFix } from "./change.js";
import { jobDone } from "./jobs.js";

const ORDER = { critical: 0, warning: 1, info: 2 };

function fixLine(client, links, line, i) {
    const fix = parseFix(line);
    if (!fix)
        return el("li", {}, el("code", {}, line));
    const path = Object.keys(links).find(k => links[k].valid && links[k].Name === fix.iface);
    const out = el("div", { class: "fix-result" });
    const button = el("button", {
        type: "button",
        class: "pf-c-button pf-m-primary pf-m-small",
        "data-change": "1",
        "data-fix": i,
        onclick: () => {
            button.disabled = true;
            if (!path)
                out.replaceChildren(el("p", { class: "hl-danger" }, `NoSuchInterface: ${fix.iface}`));
            else
                applyWithCheckpoint(client, path, fix.iface, fix.settings, out).finally(() => gate(out.parentElement));
        }
    }, "Apply fix");
    return el("li", {}, el("code", {}, line), " ", button, el("span", { class: "hl-reason" }), out);
}

function finding(client, links, f, i) {
    return el("div", { class: `hl-finding hl-sev-${f.severity}`, "data-finding": f.id, "data-interface": f.interface || "" },
              el("div", { class: "hl-finding-head" },
                 verdictLabel(f.severity),
                 " ", el("strong", {}, f.title)),
              f.why ? el("p", { class: "hl-muted" }, f.why) : null,
              f.evidence.length
                  ? el("dl", { class: "hl-evidence" }, f.evidence.map(e => [el("dt", {}, e.name), el("dd", {}, e.value)]))
                  : null,
              f.fix.length ? el("ul", { class: "hl-fixes" }, f.fix.map((l, j) => fixLine(client, links, l, `${i}.${j}`))) : null);
}

function render(client, links, report) {
    const box = document.getElementById("doctor-findings");
    const findings = [...report.findings].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
    box.replaceChildren(
        el("p", { "data-summary": "1" }, `${findings.length} findings, ${report.passed.length} checks passed, ${report.not_checked.length} not checked.`),
        ...findings.map((f, i) => finding(client, links, f, i)),
        report.not_checked.length
            ? el("details", {}, el("summary", {}, "Not checked"),
                 el("ul", {}, report.not_checked.map(c => el("li", {}, `${c.check}${c.interface ? ` (${c.interface})` : ""}: ${c.detail}`))))
            : null);
    box.dataset.loaded = "1";
    gate(box);
}

export function startDoctor(client, links) {
    const form = document.getElementById("doctor-form");
    const progress = document.getElementById("doctor-progress");
    form.addEventListener("submit", async ev => {
        ev.preventDefault();
        const run = document.getElementById("doctor-run");
        run.disabled = true;
        const peer = document.getElementById("doctor-peer").value.trim();
        const options = peer ? { peer: { t: "s", v: peer } } : {};
        document.getElementById("doctor-findings").replaceChildren();
        progress.replaceChildren(spinning("Starting…"));
        try {
            const [path] = await client.call("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "Doctor", [options]);
            const [state, json] = await jobDone(client, path, job => {
                const pct = job.ProgressValid ? ` ${Math.round(job.Progress * 100)} %` : "";
                progress.replaceChildren(spinning(`${job.Message || "Running"}${pct}`));
            });
            const report = JSON.parse(json);
            if (state !== "succeeded" || report.error)
                throw new Error(report.error || state);
            progress.replaceChildren();
            render(client, links, report);
        } catch (err) {
            progress.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err)));
        } finally {
            run.disabled = false;
        }
    });
}
