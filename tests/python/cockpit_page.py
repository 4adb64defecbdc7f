#!/usr/bin/python3
"""Drive hlctl's Cockpit page in Debian's headless Chromium (chromedriver +
Selenium from Debian): log in through Cockpit's real login form, open the
page, read it and click it. Prints one JSON object (what the page showed)
on stdout; exits non-zero on a console error, a failed request or a
timeout. Used by tests/vm_cockpit.rs.

    cockpit_page.py URL USER PASSWORD admin OUTDIR PEER DIR
    cockpit_page.py URL USER PASSWORD viewer OUTDIR
    cockpit_page.py URL USER PASSWORD tune OUTDIR PEER
    cockpit_page.py URL USER PASSWORD close OUTDIR LINK MTU
"""
import json
import os
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000",
         # cockpit-tls serves the self-signed certificate it made at its first start
         "--ignore-certificate-errors"]


def browser(profile):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in FLAGS + [f"--user-data-dir={profile}"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


class Page:
    def __init__(self, d, url, out):
        self.d, self.url, self.out = d, url, out
        self.errors = []
        self.wait = WebDriverWait(d, 60, poll_frequency=0.2)

    def until(self, what, fn, timeout=60):
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.2).until(lambda d: fn())
        except TimeoutException:
            self.shot("timeout")
            raise SystemExit(f"timeout waiting for {what}; page text:\n{self.d.find_element(By.TAG_NAME, 'body').text}")

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def shot(self, name):
        self.d.save_screenshot(f"{self.out}/{name}.png")

    def collect(self):
        """Console errors and failed requests so far (fail the run on any)."""
        for e in self.d.get_log("browser"):
            if e["level"] == "SEVERE":
                self.errors.append(f"console: {e['message']}")
        bad = self.js("""return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))
                         .filter(e => e.responseStatus >= 400).map(e => e.name + ' ' + e.responseStatus)""")
        self.errors += [f"request: {b}" for b in bad]
        # Something rendered a value instead of its text.
        text = self.js("return document.body.textContent")
        for junk in ("[object ", "undefined", "NaN"):
            if junk in text:
                self.errors.append(f"page text shows {junk!r}")

    def login(self, user, password, superuser):
        self.d.get(self.url + "/")
        self.js(f'localStorage.setItem("superuser:{user}", "{superuser}")')
        self.until("the login form", lambda: self.d.find_element(By.ID, "login-user-input").is_displayed())
        self.d.find_element(By.ID, "login-user-input").send_keys(user)
        self.d.find_element(By.ID, "login-password-input").send_keys(password)
        self.d.find_element(By.ID, "login-button").click()
        self.until("the shell after login", lambda: self.js("return !!document.querySelector('iframe.container-frame')"))
        # The login page's own probe of /cockpit/login answers 401 by design:
        # only what our page logs counts.
        self.d.get_log("browser")
        self.d.get(self.url + "/cockpit/@localhost/hlctl/index.html")
        self.until("the page", lambda: self.js("return document.body.dataset.ready === '1'"))

    def overview(self):
        """The Overview tab (the page's first): per link the speed verdict
        and usage's verdict, and the last check's line."""
        self.tab("overview")
        self.until("the overview", lambda: self.js("return document.getElementById('overview-links').dataset.loaded === '1' && !!document.querySelector('#overview-check p')"))
        self.shot(f"overview-{self.who}")
        return {"links": self.js("""return [...document.querySelectorAll('#overview-links tbody tr')].map(r => ({name: r.dataset.link,
                    speed: Number(r.dataset.speed), below: r.dataset.below === '1', best: Number(r.dataset.best || 0),
                    speed_text: r.querySelector('[data-field=speed]').textContent,
                    usage: r.querySelector('[data-field=usage]').textContent, faster: r.querySelector('[data-field=usage]').dataset.faster}))"""),
                "check": self.check_line(),
                "buttons": self.buttons(),
                "usage": [self.usage_charts(days) for days in (30, 7)]}

    def usage_charts(self, days):
        """The Overview's usage card over `days` (picked as a user picks
        it): per link its verdict and each chart's points and speed line."""
        self.js("""const s = document.getElementById('usage-days');
                   if (s.value !== String(arguments[0])) { s.value = String(arguments[0]); s.dispatchEvent(new Event('change')); }""", days)
        self.until(f"the usage charts over {days} days", lambda: self.js(
            "const b = document.getElementById('usage-charts'); return b.dataset.loaded === '1' && b.dataset.days === String(arguments[0])", days))
        return self.js("""const b = document.getElementById('usage-charts');
            return {days: Number(b.dataset.days), links: [...b.querySelectorAll('.hl-usage-link')].map(l => ({name: l.dataset.link,
                verdict: l.querySelector('[data-field=verdict]').textContent,
                charts: [...l.querySelectorAll('figure[data-metric]')].map(f => ({metric: f.dataset.metric,
                    speed: Number((f.querySelector('line.hl-chart-baseline') || {dataset: {}}).dataset.baseline || 0),
                    points: [...f.querySelectorAll('circle.hl-chart-dot')].map(c => [Number(c.dataset.ts), Number(c.dataset.value)])}))}))}""")

    def workload(self, name, count):
        """Ask the Overview whether the host carries `name` x `count`."""
        self.tab("overview")
        self.js("""const n = document.getElementById('workload-name'); n.value = arguments[0];
                   n.dispatchEvent(new Event('change'));
                   document.getElementById('workload-count').value = arguments[1];""", name, count)
        self.d.find_element(By.ID, "workload-ask").click()
        self.until("the workload's answer", lambda: self.js(
            "return document.getElementById('workload-answer').dataset.loaded === '1' || !!document.querySelector('#workload-progress [data-state=error]')"),
            timeout=240)
        err = self.js("return (document.querySelector('#workload-progress [data-state=error]') || {}).textContent")
        if err:
            raise SystemExit(f"the workload question failed in the page: {err}")
        self.shot(f"workload-{self.who}")
        return {"verdict": self.js("return document.getElementById('workload-verdict').dataset.verdict"),
                "text": self.js("return document.getElementById('workload-verdict').textContent"),
                "rows": self.js("""return [...document.querySelectorAll('#workload-rows tbody tr')].map(r => ({layer: r.dataset.layer,
                                   verdict: r.dataset.verdict, cells: [...r.cells].map(c => c.textContent)}))""")}

    TABS = ["overview", "links", "doctor", "bench", "tune", "history"]

    def theme(self, style):
        """The shell's style as Cockpit sets it (localStorage shell:style and
        its cockpit-style event): whether the page followed, and its colours."""
        self.js("localStorage.setItem('shell:style', arguments[0]); window.dispatchEvent(new Event('cockpit-style'))", style)
        time.sleep(0.3)
        self.tab("doctor")
        seen = self.d.execute_async_script("""const done = arguments[arguments.length - 1];
            document.fonts.ready.then(() => {
                const c = getComputedStyle(document.body), card = document.querySelector('#tab-doctor .pf-c-card');
                const run = getComputedStyle(document.getElementById('doctor-run'));
                done({dark: document.documentElement.classList.contains('pf-theme-dark'), background: c.backgroundColor, color: c.color,
                      pf_sheets: [...document.styleSheets].filter(s => (s.href || '').endsWith('/patternfly.css')).length,
                      pf_card: getComputedStyle(card).backgroundColor,
                      primary_button: run.backgroundColor, font_family: c.fontFamily,
                      fonts_loaded: [...document.fonts].filter(f => f.status === 'loaded').map(f => `${f.family.replace(/"/g, '')} ${f.weight}`)});
            });""")
        self.tab("overview")
        return seen

    def narrow(self, width):
        """Every tab at `width` CSS pixels: the page's own width, each table's
        and its card's, and whether its header row is drawn."""
        size = self.d.get_window_size()
        self.d.set_window_size(width, 900)
        time.sleep(0.5)
        seen = {}
        for tab in self.TABS:
            self.tab(tab)
            time.sleep(0.4)
            self.shot(f"narrow-{tab}")
            seen[tab] = self.js("""const sec = document.getElementById('tab-' + arguments[0]);
                return {viewport: window.innerWidth, page: document.documentElement.scrollWidth,
                        tables: [...sec.querySelectorAll('table.hl-table:not(.hl-sr-only)')].filter(t => t.offsetParent !== null).map(t => ({
                            id: t.id || t.className, width: t.getBoundingClientRect().width,
                            card: t.closest('.hl-card').clientWidth, card_scroll: t.closest('.hl-card').scrollWidth,
                            head_drawn: t.tHead ? t.tHead.getBoundingClientRect().height > 2 : false,
                            cells: t.tBodies[0] ? t.tBodies[0].querySelectorAll('td').length : 0,
                            labelled: t.tBodies[0] ? t.tBodies[0].querySelectorAll('td[data-label]').length : 0}))}""", tab)
        self.d.set_window_size(size["width"], size["height"])
        time.sleep(0.3)
        return seen

    def axe(self, prefix=""):
        """axe-core (tests/axe, path in $HLCTL_AXE) on every tab as it is
        now: the violations of each, with their impact."""
        src = open(os.environ["HLCTL_AXE"]).read()
        self.d.set_script_timeout(120)
        found = {}
        for tab in self.TABS:
            self.tab(tab)
            time.sleep(0.3)
            if not self.js("return !!window.axe"):
                self.js(src)
            found[prefix + tab] = self.d.execute_async_script("""const done = arguments[arguments.length - 1];
                axe.run(document, {resultTypes: ['violations']})
                   .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
                                                          targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))
                   .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: 0, targets: []}]));""")
        return found

    def check_line(self):
        """The Overview's last-check line: its regressions, baseline, text."""
        return self.js("""const p = document.querySelector('#overview-check p');
            return {regressions: p.dataset.regressions ?? null, baseline: p.dataset.baseline ?? null, text: p.textContent}""")

    def run_check(self):
        """"Run check now" on the Overview: what its progress said while it
        ran (a spinner on each), then how it ended and the new check line."""
        self.tab("overview")
        self.d.find_element(By.ID, "overview-run-check").click()
        seen = []
        end = time.time() + 300
        state = None
        while time.time() < end:
            state = self.js("const s = document.querySelector('#overview-progress [data-state]'); return s ? s.dataset.state : null")
            if state:
                break
            now = self.js("const p = document.querySelector('#overview-progress p'); return p ? [p.textContent, !!p.querySelector('.hl-spinner')] : null")
            if now and (not seen or seen[-1] != now):
                seen.append(now)
            time.sleep(0.1)
        self.until("the check line again", lambda: self.js("return !!document.querySelector('#overview-check p')"))
        self.shot(f"overview-checked-{self.who}")
        return {"state": state, "progress": seen,
                "text": self.js("return document.getElementById('overview-progress').textContent"),
                "check": self.check_line()}

    def links(self):
        self.tab("links")
        self.until("the links table", lambda: self.js("return document.querySelectorAll('#links-table tbody tr').length > 0"))
        return self.js("""
            return [...document.querySelectorAll('#links-table tbody tr')].map(tr => {
                const f = n => tr.querySelector(`[data-field="${n}"]`);
                return {name: tr.dataset.link, mtu: Number(f('mtu').textContent), speed: Number(f('speed').dataset.speed),
                        duplex: f('speed').dataset.duplex, best: (f('best') || {}).textContent || '',
                        rings: {...f('rings').dataset},
                        features: Object.fromEntries([...tr.querySelectorAll('[data-feature]')].map(s => [s.dataset.feature, s.dataset.on === '1'])),
                        rx_bps: f('rx-rate').dataset.bps, tx_bps: f('tx-rate').dataset.bps};
            })""")

    def tab(self, name):
        # At a phone's width the tab may lie beyond the list's scrolled
        # edge: brought into view first, as a user swipes before tapping.
        t = self.d.find_element(By.CSS_SELECTOR, f'[data-tab="{name}"]')
        self.js("arguments[0].scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'})", t)
        t.click()

    def buttons(self):
        """Every change button shown: its text, disabled, title."""
        return self.js("""return [...document.querySelectorAll('[data-change]')].filter(b => b.offsetParent !== null)
                          .map(b => ({text: b.textContent, disabled: b.disabled, title: b.title,
                                      reason: (b.nextElementSibling || {}).textContent || ''}))""")

    def doctor(self):
        self.tab("doctor")
        self.d.find_element(By.ID, "doctor-run").click()
        self.until("the doctor's findings", lambda: self.js(
            "const b = document.getElementById('doctor-findings'); return b.dataset.loaded === '1' || !!document.querySelector('#doctor-progress [data-state=error]')"),
            timeout=240)
        err = self.js("return (document.querySelector('#doctor-progress [data-state=error]') || {}).textContent")
        if err:
            raise SystemExit(f"doctor failed in the page: {err}")
        self.shot(f"doctor-{self.who}")
        return self.js("return [...document.querySelectorAll('[data-finding]')].map(f => ({id: f.dataset.finding, interface: f.dataset.interface, fixes: [...f.querySelectorAll('code')].map(c => c.textContent)}))")

    def apply_fix(self, finding):
        b = self.d.find_element(By.CSS_SELECTOR, f'[data-finding="{finding}"] [data-fix]')
        b.click()
        sel = f'[data-finding="{finding}"] .fix-result [data-state]'
        self.until("the fix confirmed", lambda: self.js(
            f"const s = document.querySelector('{sel}'); return s && ['confirmed','error'].includes(s.dataset.state)"), timeout=120)
        return self.js(f"return document.querySelector('{sel}').dataset.state + ': ' + document.querySelector('{sel}').textContent")

    def answer_dialog(self, button):
        """Wait for the confirmation dialog, press `button` (dialog-apply
        or dialog-cancel); what it asked, where the focus was, and whether
        it is gone."""
        self.until("the confirmation dialog", lambda: self.js("return !!document.getElementById('hl-dialog')"))
        asked = self.js("""const d = document.getElementById('hl-dialog');
            return {title: d.querySelector('#dialog-title').textContent, text: d.querySelector('#dialog-text').textContent,
                    role: d.getAttribute('role'), modal: d.getAttribute('aria-modal'),
                    focus: document.activeElement.id}""")
        self.d.find_element(By.ID, button).click()
        asked["gone"] = self.js("return !document.getElementById('hl-dialog')")
        return asked

    def set_mtu(self, link, mtu, answer="dialog-apply"):
        self.tab("links")
        self.js("""const s = document.getElementById('mtu-link');
                   s.value = [...s.options].find(o => o.textContent === arguments[0]).value;
                   document.getElementById('mtu-value').value = arguments[1];""", link, mtu)
        self.d.find_element(By.ID, "mtu-apply").click()
        asked = self.answer_dialog(answer)
        self.until("the MTU confirmed or cancelled", lambda: self.js(
            "const s = document.querySelector('#change-result [data-state]'); return s && ['confirmed','error','cancelled'].includes(s.dataset.state)"), timeout=120)
        asked["result"] = self.js("const s = document.querySelector('#change-result [data-state]'); return s.dataset.state + ': ' + s.textContent")
        return asked

    def dialog_axe(self):
        """axe-core on the page with the MTU's confirmation dialog open (then
        cancelled)."""
        self.tab("links")
        self.d.find_element(By.ID, "mtu-apply").click()
        self.until("the confirmation dialog", lambda: self.js("return !!document.getElementById('hl-dialog')"))
        if not self.js("return !!window.axe"):
            self.js(open(os.environ["HLCTL_AXE"]).read())
        found = self.d.execute_async_script("""const done = arguments[arguments.length - 1];
            axe.run(document, {resultTypes: ['violations']})
               .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
                                                      targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))
               .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: 0, targets: []}]));""")
        self.d.find_element(By.ID, "dialog-cancel").click()
        return found

    def tune(self, peer):
        """Tune eth0 against `peer`; keep what it kept when asked."""
        self.links()
        self.tab("tune")
        self.until("eth0 to tune", lambda: self.js("return [...document.getElementById('tune-link').options].some(o => o.value === 'eth0')"))
        self.js("document.getElementById('tune-link').value = 'eth0'")
        self.js("""document.getElementById('tune-peer').value = arguments[0];
                   document.getElementById('tune-runs').value = 3;
                   document.getElementById('tune-time').value = 1;""", peer)
        self.d.find_element(By.ID, "tune-run").click()
        self.answer_dialog("dialog-apply")
        done = "document.getElementById('tune-result').dataset.loaded === '1' || !!document.querySelector('#tune-progress [data-state=error]')"
        self.until("the tune's question or its end", lambda: self.js(f"return !!document.getElementById('tune-keep') || {done}"), timeout=400)
        asked = self.js("return !!document.getElementById('tune-keep')")
        if asked:
            self.shot("tune-confirm-admin")
            self.d.find_element(By.ID, "tune-keep").click()
        self.until("the tune's end", lambda: self.js(f"return {done}"), timeout=120)
        self.shot("tune-admin")
        return {"asked": asked,
                "progress": self.js("return document.getElementById('tune-progress').textContent"),
                "notes": self.js("return (document.getElementById('tune-notes') || {}).textContent || ''"),
                "outcome": self.js("return (document.querySelector('#tune-progress [data-outcome]') || {dataset: {}}).dataset.outcome || ''"),
                "steps": self.js("return [...document.querySelectorAll('#tune-steps [data-step]')].map(r => ({step: r.dataset.step, status: r.dataset.status}))"),
                "page_text": self.js("return document.body.textContent")}

    def bench(self, kind, fields):
        """Start a `kind` benchmark from the Benchmark tab with `fields`
        (input id -> value); the job's progress as the page showed it while
        it ran, then its state and figures."""
        self.tab("bench")
        self.js("""const k = document.getElementById('bench-kind'); k.value = arguments[0];
                   k.dispatchEvent(new Event('change'));
                   for (const [id, v] of Object.entries(arguments[1])) document.getElementById(id).value = v;""", kind, fields)
        self.d.find_element(By.ID, "bench-run").click()
        seen = []
        end = time.time() + 240
        while time.time() < end:
            st = self.js("""const p = document.querySelector('#bench-progress [data-state]');
                            const r = document.querySelector('#bench-result [data-state]');
                            return {progress: p ? [p.dataset.state, p.dataset.progress, p.textContent] : null,
                                    result: r ? r.dataset.state : null}""")
            if st["progress"] and st["progress"][0] in ("running", "error") and st["progress"] not in seen:
                seen.append(st["progress"])
            if st["result"] or (st["progress"] and st["progress"][0] == "error"):
                break
            time.sleep(0.1)
        self.shot(f"bench-{kind}-{self.who}")
        return {"progress": seen,
                "state": self.js("return (document.querySelector('#bench-result [data-state]') || {dataset: {}}).dataset.state || 'none'"),
                "text": self.js("return document.getElementById('bench-progress').textContent + document.getElementById('bench-result').textContent"),
                "figures": self.js("return Object.fromEntries([...document.querySelectorAll('#bench-figures [data-figure]')].map(d => [d.dataset.figure, d.textContent]))"),
                "cores": self.js("""const b = document.getElementById('bench-cores');
                    return b ? {line: b.querySelector('[data-field=cores-line]').textContent,
                                cpus: [...b.querySelectorAll('tbody tr')].map(r => ({cpu: Number(r.dataset.cpu),
                                    ...Object.fromEntries([...r.querySelectorAll('[data-share]')].map(c => [c.dataset.share, Number(c.dataset.value)]))}))} : null""")}

    def stacks(self):
        self.tab("links")
        self.until("the stacks", lambda: self.js("return document.getElementById('stacks').dataset.loaded === '1'"))
        return self.js("""return [...document.querySelectorAll('#stacks [data-stack]')].map(s => ({top: s.dataset.stack,
                          members: [...s.querySelectorAll('[data-member]')].map(m => ({name: m.dataset.member, master: m.dataset.master,
                                    line: m.querySelector('[data-field=describe]').textContent}))}))""")

    def history(self):
        self.tab("history")
        self.until("the history", lambda: self.js("return document.getElementById('history-table').dataset.loaded === '1'"))
        err = self.js("return (document.querySelector('#history-charts .hl-danger') || {}).textContent")
        if err:
            raise SystemExit(f"history failed in the page: {err}")
        self.shot(f"history-{self.who}")
        return {"rows": self.js("return document.querySelectorAll('#history-table tbody tr').length"),
                "kinds": self.js("return [...document.querySelectorAll('#history-table tbody tr')].map(r => r.dataset.kind)"),
                "baseline_lines": self.js("""return [...document.querySelectorAll('#history-charts line.hl-chart-baseline')]
                                             .map(l => ({metric: l.closest('[data-metric]').dataset.metric, value: Number(l.dataset.baseline)}))"""),
                "against": self.js("return (document.getElementById('verdicts-against') || {}).textContent || ''"),
                "verdicts": self.js("""return [...document.querySelectorAll('#verdicts tbody tr')].map(r => ({metric: r.dataset.metric,
                                       subject: r.dataset.subject, verdict: r.dataset.verdict, text: r.textContent}))"""),
                "table": self.js("""return [...document.querySelectorAll('#history-table tbody tr')].map(r => ({ts: Number(r.dataset.ts),
                                    cells: [...r.cells].map(c => c.textContent)}))"""),
                "charts": self.js("""return [...document.querySelectorAll('#history-charts figure[data-metric]')].map(f => ({
                    metric: f.dataset.metric,
                    ticks: [...f.querySelectorAll('text.hl-chart-tick[data-ts]')].map(t => ({ts: Number(t.dataset.ts), text: t.firstChild.textContent})),
                    dots: [...f.querySelectorAll('circle.hl-chart-dot')].map(c => ({ts: Number(c.dataset.ts), title: c.textContent})),
                    rows: [...f.querySelectorAll('table.hl-chart-table tbody tr')].map(r => ({ts: Number(r.dataset.ts), cells: [...r.cells].map(c => c.textContent)}))}))"""),
                "transfers": self.js("""return [...document.querySelectorAll('#transfers tbody tr')].map(r => ({subject: r.dataset.subject,
                                        protocol: r.dataset.protocol, cells: Object.fromEntries([...r.querySelectorAll('td[data-dir]')].map(c =>
                                            [c.dataset.dir, {ts: Number(c.dataset.ts || 0), text: c.textContent}]))}))"""),
                "pointer": self.pointer(),
                "page_text": self.js("return document.body.textContent")}

    def pointer(self):
        """The real pointer over the first chart's newest and oldest run:
        what the chart's readout then says, and of which run."""
        seen = []
        figs = self.d.find_elements(By.CSS_SELECTOR, "#history-charts figure[data-metric]")
        if not figs:
            return seen
        dots = figs[0].find_elements(By.CSS_SELECTOR, "circle.hl-chart-dot")
        for dot in [dots[-1], dots[0]]:
            self.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", dot)
            ActionChains(self.d).move_to_element(dot).perform()
            time.sleep(0.2)
            out = figs[0].find_element(By.CSS_SELECTOR, "output.hl-chart-readout")
            seen.append({"metric": figs[0].get_attribute("data-metric"), "dot_ts": int(dot.get_attribute("data-ts")),
                         "ts": int(out.get_attribute("data-ts") or 0), "text": out.text})
        return seen

    def close_during_try(self, link, mtu):
        """Change `link`'s MTU and close the browser while the change waits
        for the page's confirmation (the checkpoint's window)."""
        self.tab("links")
        self.js("""const s = document.getElementById('mtu-link');
                   s.value = [...s.options].find(o => o.textContent === arguments[0]).value;
                   document.getElementById('mtu-value').value = arguments[1];""", link, mtu)
        self.d.find_element(By.ID, "mtu-apply").click()
        self.answer_dialog("dialog-apply")
        state = None
        end = time.time() + 60
        while time.time() < end and state not in ("testing", "confirmed", "error"):
            state = self.js("const s = document.querySelector('#change-result [data-state]'); return s ? s.dataset.state : null")
            time.sleep(0.02)
        self.shot("close-testing")
        text = self.js("return document.getElementById('change-result').textContent")
        # Closing the window ends the session's websocket: nothing confirms.
        self.d.quit()
        return {"state": state, "text": text, "closed_at": time.time()}

    def rates(self, link, seconds):
        """The link's RX/TX rates as the page shows them, every 0.5 s."""
        seen = []
        end = time.time() + seconds
        while time.time() < end:
            row = [r for r in self.links() if r["name"] == link][0]
            seen.append([time.time(), row["rx_bps"], row["tx_bps"]])
            time.sleep(0.5)
        return seen


def main():
    url, user, password, role, out = sys.argv[1:6]
    result = {}
    with tempfile.TemporaryDirectory(prefix="hlctl-chromium.") as profile:
        d = browser(profile)
        try:
            p = Page(d, url, out)
            p.who = role
            t = time.time()
            p.login(user, password, "none" if role in ("viewer", "overview") else "any")
            if role == "close":
                p.links()
                p.collect()
                result["errors"] = p.errors
                result["close"] = p.close_during_try(sys.argv[6], sys.argv[7])
                print(json.dumps(result))
                sys.exit(1 if result["errors"] else 0)
            if role == "overview":
                result["overview"] = p.overview()
                result["workload"] = p.workload("plex-4k", 3)
                p.collect()
                result["errors"] = p.errors
                print(json.dumps(result))
                sys.exit(1 if result["errors"] else 0)
            if role == "tune":
                result["tune"] = p.tune(sys.argv[6])
                p.collect()
                result["errors"] = p.errors
                print(json.dumps(result))
                sys.exit(1 if result["errors"] else 0)
            result["login_s"] = round(time.time() - t, 1)
            result["overview"] = p.overview()
            result["links"] = p.links()
            result["limited_alert"] = p.js("return !document.getElementById('limited-alert').hidden")
            result["limited_text"] = p.js("return document.getElementById('limited-alert').textContent.trim()")
            result["rates"] = p.rates("eth0", 4)
            p.shot(f"links-{role}")
            result["buttons_links"] = p.buttons()
            result["findings"] = p.doctor()
            result["buttons_doctor"] = p.buttons()
            if role == "admin":
                result["fix"] = p.apply_fix("offload-off")
                mtu_was = [r for r in p.links() if r["name"] == "eth0"][0]["mtu"]
                result["mtu_cancelled"] = p.set_mtu("eth0", 1300, "dialog-cancel")
                time.sleep(2)
                result["mtu_cancelled"]["mtu_before"] = mtu_was
                result["mtu_cancelled"]["mtu_after"] = [r for r in p.links() if r["name"] == "eth0"][0]["mtu"]
                result["mtu"] = p.set_mtu("eth0", 1400)
                p.shot("links-changed-admin")
                result["bench"] = {
                    "net": p.bench("net", {"bench-peer": sys.argv[6], "bench-time": 3}),
                    "disk": p.bench("disk", {"bench-dir": sys.argv[7], "bench-size": 16, "bench-time": 2}),
                    "cpu": p.bench("cpu", {"bench-time": 2}),
                }
                result["buttons_bench"] = p.buttons()
                result["run_check"] = p.run_check()
            else:
                result["stacks"] = p.stacks()
                p.shot("stacks-viewer")
                p.tab("bench")
                result["buttons_bench"] = p.buttons()
                p.shot("bench-viewer")
                for b in d.find_elements(By.CSS_SELECTOR, "[data-change]"):
                    if b.is_displayed():
                        d.execute_script("arguments[0].click()", b)
                p.tab("tune")
                result["buttons_tune"] = p.buttons()
                p.shot("tune-viewer")
                # Clicking a disabled button does nothing.
                for b in d.find_elements(By.CSS_SELECTOR, "[data-change]"):
                    if b.is_displayed():
                        d.execute_script("arguments[0].click()", b)
                time.sleep(2)
            result["history"] = p.history()
            result["axe"] = p.axe()
            if role == "admin":
                result["axe"]["dialog"] = p.dialog_axe()
            if role == "viewer":
                # Both of the shell's themes, and a phone's width.
                result["theme_dark"] = p.theme("dark")
                for tab in p.TABS:
                    p.tab(tab)
                    time.sleep(0.2)
                    p.shot(f"dark-{tab}")
                result["axe"].update(p.axe("dark:"))
                result["theme_light"] = p.theme("light")
                result["narrow"] = p.narrow(360)
            p.collect()
            result["errors"] = p.errors
        finally:
            try:
                d.quit()
            except Exception:  # already closed (the close run quits itself)
                pass
    print(json.dumps(result))
    sys.exit(1 if result.get("errors") else 0)


if __name__ == "__main__":
    main()
