// rlopt serve: every element with data-elapsed (its seconds when the server drew it)
// counts on, once a second, as rlopt.app.live.duration writes it.
(function () {
  "use strict";
  var seen = new WeakMap();
  function shown(seconds) {
    var whole = Math.floor(seconds), minutes = Math.floor(whole / 60);
    if (whole < 60) return whole + " s";
    if (minutes < 60) return minutes + " min " + String(whole % 60).padStart(2, "0") + " s";
    return Math.floor(minutes / 60) + " h " + String(minutes % 60).padStart(2, "0") + " min";
  }
  setInterval(function () {
    var now = Date.now();
    document.querySelectorAll("[data-elapsed]").forEach(function (clock) {
      if (!seen.has(clock)) seen.set(clock, now);
      clock.textContent = shown(Number(clock.dataset.elapsed) + (now - seen.get(clock)) / 1000);
    });
  }, 1000);
})();
