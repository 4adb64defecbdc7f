// The Benchmark tab: network to a peer (HOST[:PORT], as `hlctl bench net
// -c`), disk in a directory, CPU, each through Manager.StartBenchmark as a
// job: its progress live from the job object, then its figures (the job's
// typed Result). hlctld stores the result in the history as `hlctl bench`
// does. Starting one needs the run-benchmark authorization (admin only by
// the policy), so in limited access the button is disabled with the reason.
import { el, errorText, spinning, val } from "./dom.js";
import { bps as rate, value } from "./units.js";
import { gate } from "./access.js";
import { jobDone } from "./jobs.js";

// "host", "host:5201", "[fe80::1]:5201", "fe80::1" -> {host, port}.
export function parsePeer(text) {
    const t = text.trim();
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
    if (v6)
        return { host: v6[1], port: v6[2] ? Number(v6[2]) : null };
    const hp = /^([^:]+):(\d+)$/.exec(t);
    if (hp)
        return { host: hp[1], port: Number(hp[2]) };
    return { host: t, port: null };
}

function params(kind) {
    const v = id => document.getElementById(id).value.trim();
    const seconds = Number(v("bench-time"));
    if (kind === "net") {
        const peer = parsePeer(v("bench-peer"));
        const p = { host: { t: "s", v: peer.host }, time_s: { t: "u", v: seconds } };
        if (peer.port !== null)
            p.port = { t: "q", v: peer.port };
        return p;
    }
    if (kind === "disk")
        return {
            dir: { t: "s", v: v("bench-dir") },
            size: { t: "t", v: Number(v("bench-size")) * 1024 * 1024 },
            runtime_s: { t: "d", v: seconds },
        };
    return { time_s: { t: "d", v: seconds } };
}

const num = (x, digits) => Number.isFinite(x) ? x.toFixed(digits) : "–";

// The headline figures of a finished job's Result, by kind.
function figures(kind, r) {
    const g = k => val(r[k]);
    if (kind === "net")
        return [["Received", rate(g("bps"))], ["Sent", rate(g("sent_bps"))],
            ["Retransmits", String(g("retransmits") ?? "–")], ["Duration", `${num(g("duration_s"), 1)} s`]];
    if (kind === "disk")
        return [["IOPS", num(g("iops"), 0)], ["Throughput", value(g("bytes_per_second"), "B/s")],
            ["Latency mean", `${num(g("latency_mean_us"), 0)} µs`], ["Latency p99", `${num(g("latency_p99_us"), 0)} µs`]];
    return [["Events/s", num(g("events_per_second"), 1)], ["Threads", String(g("threads") ?? "–")],
        ["Latency avg", `${num(g("latency_avg_ms"), 2)} ms`], ["Latency p95", `${num(g("latency_p95_ms"), 2)} ms`]];
}

function showKind() {
    const kind = document.getElementById("bench-kind").value;
    for (const f of document.querySelectorAll("[data-bench-for]")) {
        const on = f.dataset.benchFor === kind;
        f.hidden = !on;
        for (const i of f.querySelectorAll("input"))
            i.required = on;
    }
}

function showProgress(box, job) {
    const bar = el("progress", { max: 1, value: job.ProgressValid ? job.Progress : null });
    const pct = job.ProgressValid ? ` ${Math.round(job.Progress * 100)} %` : "";
    box.replaceChildren(el("p", { class: "hl-status", "data-state": job.State, "data-progress": job.ProgressValid ? job.Progress : "" },
                           bar, " ", `${job.Message || job.State}${pct}`));
}

// The cores during a net run: the CLI's line (`cores_line`) and a row per
// CPU with its busy share split as /proc/stat splits it.
const SHARES = [["softirq_percent", "Softirq"], ["system_percent", "System"], ["user_percent", "User"],
    ["irq_percent", "IRQ"], ["steal_percent", "Steal"]];

function coresView(report) {
    const c = report.cores;
    if (!c || !c.cpus)
        return null;
    const pct = v => `${v.toFixed(1)} %`;
    return el("div", { id: "bench-cores" },
              el("h3", {}, "The cores during the run"),
              el("p", { "data-field": "cores-line" }, report.cores_line || ""),
              el("table", { class: "pf-c-table pf-m-compact pf-m-grid-md hl-table", id: "bench-cores-table" },
                 el("thead", {}, el("tr", {}, ["CPU", "Busy", ...SHARES.map(s => s[1]), "NET_RX"].map(h => el("th", { scope: "col" }, h)))),
                 el("tbody", {}, c.cpus.map(u => el("tr", { "data-cpu": u.cpu },
                     el("th", { scope: "row" }, `CPU${u.cpu}`),
                     el("td", { "data-share": "busy_percent", "data-value": u.busy_percent },
                        el("meter", { min: 0, max: 100, value: u.busy_percent, "aria-label": `CPU${u.cpu} busy` }), ` ${pct(u.busy_percent)}`),
                     SHARES.map(([k]) => el("td", { "data-share": k, "data-value": u[k] }, pct(u[k]))),
                     el("td", { "data-share": "net_rx", "data-value": u.net_rx }, String(u.net_rx)))))));
}

function showResult(box, kind, state, result, json) {
    const failure = val(result.error) || (state !== "succeeded" ? (JSON.parse(json || "{}").error || state) : "");
    if (failure) {
        box.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, `Failed: ${failure}`));
        return;
    }
    const rows = figures(kind, result);
    box.replaceChildren(el("p", { class: "hl-status hl-success", "data-state": "succeeded", "data-kind": kind },
                           `${kind} benchmark done; stored in the history.`),
                        el("dl", { class: "hl-evidence", id: "bench-figures" },
                           rows.map(([k, v]) => [el("dt", {}, k), el("dd", { "data-figure": k }, v)])),
                        kind === "net" ? coresView(JSON.parse(json || "{}")) : null);
}

async function run(client, progress, result) {
    const kind = document.getElementById("bench-kind").value;
    result.replaceChildren();
    progress.replaceChildren(spinning("Starting…"));
    const [path] = await client.call("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "StartBenchmark",
                                     [kind, params(kind), {}]);
    const [state, json, typed] = await jobDone(client, path, job => showProgress(progress, job));
    progress.replaceChildren();
    showResult(result, kind, state, typed || {}, json);
}

export function startBench(client) {
    const form = document.getElementById("bench-form");
    const progress = document.getElementById("bench-progress");
    const result = document.getElementById("bench-result");
    document.getElementById("bench-kind").addEventListener("change", showKind);
    showKind();
    form.addEventListener("submit", ev => {
        ev.preventDefault();
        document.getElementById("bench-run").disabled = true;
        run(client, progress, result)
                .catch(err => progress.replaceChildren(el("p", { class: "hl-status hl-danger", "data-state": "error" }, errorText(err))))
                .finally(() => gate(form));
    });
}
