// The setup screen: rule profile, calibration health, table spec upload, printable markers, a photo to check.
"use strict";

(() => {
  const message = document.getElementById("setup-message");

  function say(text, ok) {
    message.textContent = text;
    message.classList.toggle("ok", Boolean(ok));
  }

  function rows(table, pairs) {
    table.replaceChildren();
    for (const [k, v] of pairs) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v;
    }
  }

  async function loadProfile() {
    const p = await TR.api("GET", "/api/profile");
    const pick = document.getElementById("profile-pick");
    pick.replaceChildren(...p.available.map((n) => new Option(n, n)));
    pick.value = p.profile;
    const titles = TR.LINE_TITLES;
    rows(document.getElementById("profile-limits"), [
      ["profile", `${p.profile}: ${p.title}`],
      ...Object.entries(p.limits_mm).map(([k, mm]) => [titles[k] || k, TR.length(mm)]),
      ["too close to call", `within ${p.close_sigmas} sigma of a line`],
      ["bases read as", `${p.base_sizes_mm.join(", ")} mm`],
    ]);
  }

  async function loadSpec() {
    const s = await TR.api("GET", "/api/spec");
    const m = s.markers.marker;
    document.getElementById("spec-summary").textContent =
      `Table ${s.table.width_mm} x ${s.table.depth_mm} mm, ${m.length} markers (${s.markers.dictionary}, ids ${m.map((x) => x.id).join(", ")}).`;
  }

  document.getElementById("profile-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await TR.api("PUT", "/api/profile", { profile: document.getElementById("profile-pick").value });
      await loadProfile();
      say(`Profile ${r.profile} in use.`, true);
    } catch (err) {
      say(err.message);
    }
  });

  document.getElementById("recalibrate").addEventListener("click", async () => {
    try {
      await TR.api("POST", "/api/calibrate");
      say("The table will be calibrated again on the next settled frame.", true);
    } catch (err) {
      say(err.message);
    }
  });

  async function loadEmpty() {
    const e = await TR.api("GET", "/api/empty");
    const when = e.captured_at ? new Date(e.captured_at * 1000).toLocaleTimeString() : null;
    document.getElementById("empty-status").textContent = e.pending
      ? "Waiting for the table to settle to capture it empty."
      : when
        ? `Captured at ${when}: bases are what changed since.`
        : `Not captured: bases are found without it.${e.note ? ` (${e.note.replace(/^the empty table was not captured: /, "last try: ")})` : ""}`;
    document.getElementById("forget-empty").disabled = !e.captured;
  }

  document.getElementById("capture-empty").addEventListener("click", async () => {
    try {
      await TR.api("POST", "/api/empty");
      say("The next settled frame will be taken as the empty table: clear the models off first.", true);
      await loadEmpty();
    } catch (err) {
      say(err.message);
    }
  });

  document.getElementById("forget-empty").addEventListener("click", async () => {
    try {
      await TR.api("DELETE", "/api/empty");
      say("The empty table is forgotten: bases are found without it.", true);
      await loadEmpty();
    } catch (err) {
      say(err.message);
    }
  });

  async function upload(input, method, path, done) {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    try {
      await TR.api(method, path, undefined, await file.arrayBuffer());
      say(done(file), true);
    } catch (err) {
      say(err.message);
    }
  }

  const spec = document.getElementById("spec-file");
  spec.addEventListener("change", async () => {
    await upload(spec, "PUT", "/api/spec", (file) => `Table spec ${file.name} in use; calibrating on the next settled frame.`);
    loadSpec();
  });
  const photo = document.getElementById("photo-file");
  photo.addEventListener("change", () => upload(photo, "POST", "/api/photo", (file) => `Measuring ${file.name}.`));

  TR.onResult((r) => {
    const c = r.calibration || {};
    const list = (a) => (a && a.length ? a.join(", ") : "none");
    rows(document.getElementById("calibration"), [
      ["markers used", `${list(c.markers_used)} of ${list(c.markers_expected)}`],
      ["markers seen", list(c.markers_seen)],
      ["reprojection error", c.reprojection_error_mm === undefined ? "–" : `${c.reprojection_error_mm} mm rms, ${c.reprojection_error_max_mm ?? "–"} mm max`],
      ["corners rejected", c.corners_rejected ?? "–"],
      ["scale", c.px_per_mm ? `${c.px_per_mm} px/mm` : "–"],
      ["lens", c.lens_corrected ? "corrected (camera.json)" : c.lens_estimated ? "estimated from the markers" : "uncorrected"],
      ["rim heights", c.heights_corrected ? "corrected for parallax" : "not corrected"],
    ]);
    const notes = document.getElementById("calibration-notes");
    notes.replaceChildren(...(c.notes || []).map((n) => { const li = document.createElement("li"); li.textContent = n; return li; }));
  });

  // The roster: how the models on the table match it, and a way back when they do not (another table).
  function showRoster(r) {
    const m = r.roster_match;
    const units = r.units.length;
    const summary = document.getElementById("roster-summary");
    const warn = document.getElementById("roster-mismatch");
    summary.textContent = !m || !m.roster
      ? `No models in units: ${r.models.length} model(s) on the table, none in a unit.`
      : `${units} unit(s), ${m.roster} model(s) in units; ${m.matched} of the ${m.seen} model(s) on the table are the roster's.`;
    warn.hidden = !(m && m.mismatch);
    if (m && m.mismatch) {
      warn.textContent = `The models on the table do not match the roster: only ${m.matched} of the ${m.seen} model(s) seen ` +
        `stood within reach of the roster's ${m.roster} model(s) in units. Another table? Reset the roster to start afresh.`;
    }
    // a roster set aside (by a reset, or by a photo of another table): it can come back
    const undo = r.roster_undo;
    const note = document.getElementById("roster-undo-note");
    note.hidden = !undo;
    document.getElementById("undo-roster").hidden = !undo;
    if (undo) {
      note.textContent = `A fresh roster: the last one (${undo.units} unit(s), ${undo.models} model(s)) is set aside. ` +
        "Undo brings it back.";
    }
  }

  document.getElementById("undo-roster").addEventListener("click", async () => {
    try {
      const done = await TR.api("POST", "/api/roster/undo");
      say(`Roster back: ${done.units_restored} unit(s).`, true);
    } catch (err) {
      say(err.message);
    }
  });

  // While a photo is checked, the source it replaced (the camera, the demo's recording) can come back.
  function showPhoto(st) {
    const back = document.getElementById("back-to-source");
    const note = document.getElementById("photo-status");
    back.hidden = !st.back_to;
    note.hidden = !st.back_to;
    if (st.back_to) {
      const name = st.back_to.split(/[\\/]/).pop();
      back.textContent = `Back to ${name}`;
      note.textContent = `Checking the uploaded photo instead of ${name}.`;
    }
  }

  document.getElementById("back-to-source").addEventListener("click", async () => {
    try {
      const done = await TR.api("DELETE", "/api/photo");
      say(`Back to ${done.source}.`, true);
    } catch (err) {
      say(err.message);
    }
  });

  document.getElementById("reset-roster").addEventListener("click", async () => {
    if (!window.confirm("Reset the roster? Every unit, id and base override of this table is forgotten.")) return;
    try {
      const done = await TR.api("DELETE", "/api/roster");
      say(`Roster reset: ${done.units_removed} unit(s) forgotten; the models on the table are of no unit.`, true);
    } catch (err) {
      say(err.message);
    }
  });

  TR.onResult(showRoster);
  TR.onStatus(showPhoto);
  TR.onResult(() => loadEmpty().catch(() => {}));
  loadEmpty().catch((err) => say(err.message));
  loadProfile().catch((err) => say(err.message));
  loadSpec().catch((err) => say(err.message));
  TR.start();
})();
