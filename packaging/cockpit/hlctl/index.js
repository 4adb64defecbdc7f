// hlctl's Cockpit page: talks only to org.hlctl.Daemon1 on the system bus.
/* global cockpit */
import { followTheme, showError, watchTables } from "./dom.js";
import { access, watchAccess, gate } from "./access.js";
import { startLinks } from "./links.js";
import { startJobs } from "./jobs.js";
import { startDoctor } from "./doctor.js";
import { loadHistory } from "./history.js";
import { startTune } from "./tune.js";
import { startBench } from "./bench.js";
import { startStacks } from "./stacks.js";
import { startOverview } from "./overview.js";
import { startWorkload } from "./workload.js";

followTheme();
watchTables();

const client = cockpit.dbus("org.hlctl.Daemon1", { bus: "system", superuser: "try" });
client.addEventListener("close", (ev, options) => {
    if (options.problem)
        showError({ problem: options.problem, message: `hlctld: ${options.problem}` });
});

let reloadOverview = () => {};

function showTab(name) {
    for (const b of document.querySelectorAll("[data-tab]")) {
        b.setAttribute("aria-selected", String(b.dataset.tab === name));
        b.parentElement.classList.toggle("pf-m-current", b.dataset.tab === name);
    }
    for (const s of document.querySelectorAll(".hl-tab"))
        s.hidden = s.id !== `tab-${name}`;
    if (name === "history")
        loadHistory(client);
    if (name === "overview")
        reloadOverview();
}

for (const b of document.querySelectorAll("[data-tab]"))
    b.addEventListener("click", () => showTab(b.dataset.tab));

access.listeners.push(() => { document.body.dataset.canChange = access.canChange ? "1" : "0" });
watchAccess().then(() => {
    const links = startLinks(client);
    reloadOverview = startOverview(client, links);
    startWorkload(client);
    startStacks(client, links);
    startJobs(client);
    startDoctor(client, links);
    startBench(client);
    startTune(client, links);
    gate();
    document.body.dataset.ready = "1";
});
