// The Overview's "Will it carry what I run?": a Doctor job with one
// workload spec (`plex-4k:3`, or `need:net=400M,cpu=3000`), as
// `hlctl doctor --workload`/`--need` runs it; its answer from the report's
// `workloads`: the verdict, the owner's sentence and a row per layer.
// Open to everyone: a caller without run-benchmark gets the read-only
// doctor, whose layers come from the history.
import { el, errorText, spinning, verdictLabel } from "./dom.js";
import { jobDone } from "./jobs.js";
import { layer as layerValue } from "./units.js";

const MANAGER = ["/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager"];

// The spec the bus takes, from the form.
function spec() {
    const name = document.getElementById("workload-name").value;
    if (name === "need")
        return `need:${document.getElementById("workload-need").value.trim()}`;
    return `${name}:${document.getElementById("workload-count").value}`;
}

function answerView(a) {
    const pct = p => p === null || p === undefined ? "–" : `${p >= 0 ? "+" : ""}${p.toFixed(0)} %`;
    return [
        el("p", { id: "workload-verdict", "data-verdict": a.verdict }, verdictLabel(a.verdict), " ", a.summary),
        el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table", id: "workload-rows" },
           el("thead", {}, el("tr", {}, ["Layer", "Needed", "Measured", "Headroom", "Verdict", "Source"].map(h => el("th", { scope: "col" }, h)))),
           el("tbody", {}, a.rows.map(r => el("tr", { "data-layer": r.layer, "data-verdict": r.verdict },
               el("td", {}, r.layer), el("td", {}, layerValue(r.needed, r.layer)),
               el("td", {}, r.measured === null ? "–" : layerValue(r.measured, r.layer)),
               el("td", {}, pct(r.headroom_percent)), el("td", {}, r.verdict), el("td", {}, r.source))))),
    ];
}

async function ask(client) {
    const button = document.getElementById("workload-ask");
    const progress = document.getElementById("workload-progress");
    const box = document.getElementById("workload-answer");
    button.disabled = true;
    box.replaceChildren();
    const options = { workloads: { t: "as", v: [spec()] } };
    const peer = document.getElementById("workload-peer").value.trim();
    if (peer)
        options.peer = { t: "s", v: peer };
    progress.replaceChildren(spinning("Starting…"));
    try {
        const [path] = await client.call(...MANAGER, "Doctor", [options]);
        const [state, json] = await jobDone(client, path, job => {
            const pct = job.ProgressValid ? ` ${Math.round(job.Progress * 100)} %` : "";
            progress.replaceChildren(spinning(`${job.Message || "Running"}${pct}`));
        });
        const report = JSON.parse(json);
        if (state !== "succeeded" || report.error)
            throw new Error(report.error || state);
        const answer = (report.workloads || [])[0];
        if (!answer)
            throw new Error("the doctor's report has no answer for the workload");
        progress.replaceChildren();
        box.replaceChildren(...answerView(answer));
        box.dataset.loaded = "1";
    } catch (err) {
        progress.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err)));
    } finally {
        button.disabled = false;
    }
}

export function startWorkload(client) {
    const name = document.getElementById("workload-name");
    name.addEventListener("change", () => {
        const own = name.value === "need";
        document.getElementById("workload-need-label").hidden = !own;
        document.getElementById("workload-count").disabled = own;
    });
    document.getElementById("workload-form").addEventListener("submit", ev => {
        ev.preventDefault();
        ask(client);
    });
}
