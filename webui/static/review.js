// The review screen's unit editor: the units of the reviewed game and which unit each model of the shown state
// is in, sent as a whole (POST /review/units); the server judges every state again and the page reloads.
"use strict";

(() => {
  const box = document.getElementById("review-units");
  if (!box) return;
  const message = document.getElementById("ru-message");
  const unitRows = document.getElementById("ru-units");

  function text(row, cls) {
    const value = row.querySelector(cls).value.trim();
    return value === "" ? null : value;
  }

  function units() {
    const out = [];
    for (const row of unitRows.querySelectorAll("tr")) {
      const id = text(row, ".ru-id");
      if (!id) continue;
      const move = text(row, ".ru-move");
      out.push({ id, player: text(row, ".ru-player"), name: text(row, ".ru-name"), leader: text(row, ".ru-leader"),
        move_in: move === null ? null : Number(move) });
    }
    return out;
  }

  function membership() {
    const out = {};
    for (const input of box.querySelectorAll(".ru-member")) out[input.dataset.model] = input.value.trim() || null;
    return out;
  }

  document.getElementById("ru-add").addEventListener("click", () => {
    const row = unitRows.querySelector("tr").cloneNode(true);
    for (const input of row.querySelectorAll("input")) input.value = "";
    unitRows.appendChild(row);
    row.querySelector(".ru-id").focus();
  });

  document.getElementById("ru-apply").addEventListener("click", async () => {
    message.textContent = "judging the game again...";
    try {
      const done = await TR.api("POST", "/review/units", { units: units(), membership: membership() });
      message.textContent = `${done.states} states judged again`;
      location.reload();
    } catch (err) {
      message.textContent = err.message;
    }
  });
})();
