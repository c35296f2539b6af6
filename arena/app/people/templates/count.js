// The speech form's live length count, as arena.speechchecks.length counts a speech: letters and digits for a
// budget in characters, else words (each Chinese, Japanese or Korean character one). The page works without it:
// the server prints the count of the text it sent.
"use strict";
(function () {
  var speech = document.getElementById("speech"), shown = document.getElementById("count-n");
  var count = document.getElementById("count");
  if (!speech || !shown || !count) {
    return;
  }
  var pattern = count.getAttribute("data-unit") === "characters" ? /[\p{L}\p{N}]/gu
    : /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[\p{L}\p{N}]+/gu;
  function update() {
    var found = speech.value.match(pattern);
    shown.textContent = String(found ? found.length : 0);
  }
  speech.addEventListener("input", update);
  update();
  // A page the browser brings back from its back/forward cache (after a submit, say) is as it was then, form and
  // all: ask the server again, which shows a submitted speech read-only.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      window.location.reload();
    }
  });
})();
