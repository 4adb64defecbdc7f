// The Jobs card: every job from the ObjectManager (description, state,
// progress when valid, Cancel when cancelable), as Cockpit's storage page
// shows its jobs.
import { el, errorText, showError } from "./dom.js";
import { gate } from "./access.js";

export function startJobs(client) {
    const jobs = client.proxies("org.hlctl.Daemon1.Job", "/org/hlctl/Daemon1");
    const body = document.querySelector("#jobs-table tbody");
    const render = () => {
        const paths = Object.keys(jobs).filter(k => jobs[k] && jobs[k].valid).sort();
        body.replaceChildren(...paths.map(k => {
            const j = jobs[k];
            const pct = j.ProgressValid ? `${Math.round(j.Progress * 100)} %` : (j.State === "running" ? "running" : "–");
            const cancel = j.Cancelable
                ? el("button", {
                    type: "button",
                    class: "pf-c-button pf-m-secondary",
                    "data-change": "1",
                    onclick: () => client.call(k, "org.hlctl.Daemon1.Job", "Cancel", []).catch(e => showError(e))
                }, "Cancel")
                : null;
            return el("tr", { "data-job": k, "data-kind": j.Kind, "data-state": j.State },
                      el("td", {}, j.Kind), el("td", {}, j.State), el("td", {}, pct),
                      el("td", {}, j.Message), el("td", {}, cancel, cancel ? el("span", { class: "hl-reason" }) : null));
        }));
        gate(body);
    };
    for (const ev of ["changed", "added", "removed"])
        jobs.addEventListener(ev, render);
    jobs.wait().then(render);
    return jobs;
}

// Wait for the job at `path` to end; resolves with [state, result JSON,
// typed Result].
export function jobDone(client, path, onProgress) {
    return new Promise((resolve, reject) => {
        const job = client.proxy("org.hlctl.Daemon1.Job", path);
        let done = false;
        const finish = () => {
            if (done)
                return;
            if (["succeeded", "failed", "cancelled"].includes(job.State) && job.ResultJson) {
                done = true;
                resolve([job.State, job.ResultJson, job.Result]);
            } else if (onProgress) {
                onProgress(job);
            }
        };
        job.addEventListener("changed", finish);
        job.wait().then(() => {
            if (!job.valid)
                reject(new Error(`${path}: the job is gone`));
            finish();
        }).catch(e => reject(new Error(errorText(e))));
    });
}
