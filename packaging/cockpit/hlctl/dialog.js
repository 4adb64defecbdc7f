// A confirmation dialog before a change that may cut this browser off the
// host (Cockpit's idiom: a modal with the action and Cancel). Escape and
// Cancel answer no; focus starts on Cancel and stays in the dialog.
import { el } from "./dom.js";

// Ask `title`/`text` with `action` as the button that goes ahead;
// resolves true only when it was pressed.
export function askFirst(title, text, action) {
    return new Promise(resolve => {
        const back = document.activeElement;
        const cancel = el("button", { type: "button", class: "pf-c-button pf-m-secondary", id: "dialog-cancel" }, "Cancel");
        const go = el("button", { type: "button", class: "pf-c-button pf-m-danger", id: "dialog-apply" }, action);
        // PatternFly's modal box, warning variant, centred over its backdrop.
        const box = el("div", { class: "pf-c-modal-box pf-m-sm pf-m-warning", role: "dialog", "aria-modal": "true", "aria-labelledby": "dialog-title", "aria-describedby": "dialog-text", id: "hl-dialog" },
                       el("header", { class: "pf-c-modal-box__header" },
                          el("h1", { class: "pf-c-modal-box__title", id: "dialog-title" }, title)),
                       el("div", { class: "pf-c-modal-box__body" }, el("p", { id: "dialog-text" }, text)),
                       el("footer", { class: "pf-c-modal-box__footer" }, go, cancel));
        const backdrop = el("div", { class: "pf-c-backdrop" }, el("div", { class: "pf-l-bullseye" }, box));
        const end = answer => {
            backdrop.remove();
            if (back && back.focus)
                back.focus();
            resolve(answer);
        };
        go.addEventListener("click", () => end(true));
        cancel.addEventListener("click", () => end(false));
        backdrop.addEventListener("keydown", ev => {
            if (ev.key === "Escape")
                end(false);
            else if (ev.key === "Tab") {
                // Two buttons: Tab moves between them and nowhere else.
                ev.preventDefault();
                (document.activeElement === go ? cancel : go).focus();
            }
        });
        document.body.append(backdrop);
        cancel.focus();
    });
}
