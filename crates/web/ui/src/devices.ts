// Settings' "Your other devices": pair a phone or a tablet with a one-time code (its address as a QR code), see
// the devices paired, and end one at once. Only the computer's own session manages devices; a device's page says so.

import { api, ApiError } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, el, status } from "./dom";
import type { DeviceList, PairingCode } from "./generated";

type DeviceView = DeviceList["devices"][number];

const when = (millis: number): string => new Date(millis).toLocaleString();

function reach(device: DeviceView): string {
  const notebooks = device.limits.notebooks ?? [];
  const where = notebooks.length ? notebooks.map((n) => n.path).join(", ") : "all notebooks";
  return device.limits.read_only ? `${where}, read-only` : where;
}

export async function deviceSettings(box: HTMLElement, made?: PairingCode) {
  let list: DeviceList;
  try {
    list = await api.devices();
  } catch (e) {
    const forbidden = e instanceof ApiError && e.kind === "forbidden";
    box.replaceChildren(el("p", { class: forbidden ? "hint" : "error", text: describeError(e) }));
    return;
  }
  const redraw = () => void deviceSettings(box);
  const rows = list.devices.map((device) => {
    const end = el("button", { type: "button", class: "device-revoke", text: device.paired ? "End…" : "Cancel code" });
    end.setAttribute("aria-label", `${device.paired ? "End" : "Cancel the code of"} ${device.name}`);
    end.onclick = async () => {
      const question = device.paired
        ? `“${device.name}” stops reaching quire at once; its open page stops too. Pair it again to use it again.`
        : `The code for “${device.name}” stops working.`;
      if (!(await confirmDialog(`End ${device.name}?`, question, device.paired ? "End device" : "Cancel code"))) return;
      try {
        await api.revokeDevice(device.name);
        status(`${device.name} is ended`);
        redraw();
      } catch (e) {
        status(describeError(e), true);
      }
    };
    const seen = device.paired
      ? `paired ${when(device.at)}${device.last_seen ? `, last seen ${when(device.last_seen)}` : ""}${device.passkeys ? `, signs in with ${device.passkeys === 1 ? "a passkey" : `${device.passkeys} passkeys`}` : ""}`
      : `code not used yet, until ${when(device.at)}`;
    return el("li", { class: "device" }, el("strong", { text: device.name }), ` ${reach(device)}; ${seen} `, end);
  });
  const name = el("input", { id: "device-name", type: "text", autocomplete: "off", placeholder: "phone, tablet…", maxlength: "60", required: "" });
  const readOnly = el("input", { id: "device-read-only", type: "checkbox" });
  // One box per notebook (a notebook reaches what is inside it too); none ticked: all of them.
  const notebooks = el("div", { class: "device-notebooks" });
  const pair = el("button", { type: "submit", id: "device-pair", text: "Pair a device" });
  const shown = el("div", { id: "device-code", "aria-live": "polite" });
  const form = el(
    "form",
    { id: "device-form" },
    el("label", { for: "device-name", text: "Name" }),
    name,
    el("fieldset", { id: "device-notebooks" }, el("legend", { text: "Limit to notebooks (none ticked: all)" }), notebooks),
    el("label", { class: "inline" }, readOnly, " Read only"),
    pair,
  );
  void api.notebooks().then((nb) => {
    notebooks.replaceChildren(
      ...nb.notebooks.map((n) => el("label", { class: "inline" }, el("input", { type: "checkbox", value: n.notebook_id }), ` ${n.path}`)),
    );
  });
  form.onsubmit = async (event) => {
    event.preventDefault();
    const chosen = [...notebooks.querySelectorAll<HTMLInputElement>("input:checked")].map((box) => box.value);
    const named = name.value.trim();
    // What went wrong shows here, by the form, in place of any code shown before.
    if (!named) {
      shown.replaceChildren(el("p", { class: "error", role: "alert", text: "Name the device first (phone, tablet…)." }));
      name.focus();
      return;
    }
    try {
      const code = await api.pairDevice({ name: named, notebooks: chosen, read_only: readOnly.checked });
      await deviceSettings(box, code);
    } catch (e) {
      shown.replaceChildren(el("p", { class: "error", role: "alert", text: describeError(e) }));
    }
  };
  if (made) showCode(shown, made);
  box.replaceChildren(
    el("p", {
      class: "hint",
      text: list.address
        ? `Your phone or tablet opens quire at ${list.address}: pair it once with a code, and it stays signed in (ended here at any time).`
        : "This server answers on this computer only. To reach it from your phone, start it with quire serve --listen (see README, “Your notes on your phone”).",
    }),
    rows.length ? el("ul", { id: "device-list" }, ...rows) : el("p", { class: "hint", text: "No device is paired yet." }),
    form,
    shown,
  );
}

function showCode(box: HTMLElement, code: PairingCode) {
  const image = el("img", {
    class: "qr",
    alt: `QR code of ${code.link}`,
    src: `data:image/svg+xml;base64,${btoa(code.qr_svg)}`,
    width: "200",
    height: "200",
  });
  box.replaceChildren(
    el("p", {}, "Code: ", el("strong", { class: "pair-code", text: code.code }), ` (works once, until ${when(code.expires)})`),
    image,
    el("p", { class: "hint" }, "Scan it with the device, or open ", el("code", { text: code.link }), " there."),
    ...(code.warning ? [el("p", { class: "error", text: code.warning })] : []),
  );
}
