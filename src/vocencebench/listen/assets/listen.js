(function () {
  "use strict";
  var T = JSON.parse(document.getElementById("vb-test").textContent);
  var KEY = "vb-listen-" + T.test;
  var st = load();
  var serve = false;
  var cur = Math.min(st.current || 0, T.trials.length - 1);
  var qi = 0;
  // Answers are kept per rater name (under "r:" + name, so no name is an object's own
  // property such as __proto__): a new name starts empty and the previous rater's answers
  // stay under theirs, so two raters sharing a browser never export each other's answers.
  function load() {
    try {
      var s = JSON.parse(localStorage.getItem(KEY) || "null");
      if (s && s.byRater && typeof s.byRater === "object" && Array.isArray(s.pending)) return s;
    } catch (e) {}
    return {rater: "", byRater: {}, current: 0, pending: []};
  }
  function save() { st.current = cur; localStorage.setItem(KEY, JSON.stringify(st)); }
  function mine() { return st.byRater["r:" + st.rater] || {}; }
  function mineToWrite() {
    var k = "r:" + st.rater; return st.byRater[k] || (st.byRater[k] = {});
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag); if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text; return e;
  }
  function akey(n, dim) { return n + "|" + dim; }
  function answered(n) {
    var ans = mine();
    return T.questions.every(function (q) { var a = ans[akey(n, q.dim)]; return a && a.w; });
  }
  function nDone() { return T.trials.filter(function (t) { return answered(t.n); }).length; }
  // Screen A is the left clip, B the right one. The page does not know which system made
  // either (only the test's key does, which it never loads): answers leave as left/right.
  function toSides(t, ans) {
    var none = ans.sA === null || ans.sA === undefined || ans.sB === null || ans.sB === undefined;
    return {trial: t.n, id: t.id, dimension: ans.dim,
            choice: ans.w === "A" ? "left" : ans.w === "B" ? "right" : "tie",
            score_left: none ? "" : ans.sA, score_right: none ? "" : ans.sB};
  }
  function csvField(v) {
    v = String(v); return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }
  function csv() {
    var rows = ["test,trial,id,dimension,choice,score_left,score_right,rater"], ans = mine();
    T.trials.forEach(function (t) {
      T.questions.forEach(function (q) {
        var a = ans[akey(t.n, q.dim)]; if (!a || !a.w) return;
        var r = toSides(t, a);
        rows.push([T.test, r.trial, r.id, r.dimension, r.choice, r.score_left, r.score_right,
                   st.rater].map(csvField).join(","));
      });
    });
    return rows.join("\r\n") + "\r\n";
  }
  function exportCsv() {
    var blob = new Blob([csv()], {type: "text/csv"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "labels-" + (st.rater || "rater").replace(/[^A-Za-z0-9._-]+/g, "_") + ".csv";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
    status("exported " + (csv().split("\r\n").length - 2) + " answers", "ok");
  }
  function status(msg, cls) { var s = document.getElementById("status"); s.textContent = msg; s.className = cls || "muted"; }
  function send() {
    if (!serve || !st.pending.length) return;
    var body = st.pending[0];
    fetch("api/answer", {method: "POST", headers: {"Content-Type": "application/json"},
                         body: JSON.stringify(body)})
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function () { st.pending.shift(); save(); status("saved on the server", "ok"); send(); })
      .catch(function (e) { status("not yet saved on the server (" + e.message + "); kept in this browser, retried", "warn");
                            setTimeout(send, 3000); });
  }
  function answer(w) {
    if (!st.rater) { status("enter your rater name first", "warn"); document.getElementById("rater").focus(); return; }
    var t = T.trials[cur], q = T.questions[qi], k = akey(t.n, q.dim), ans = mineToWrite();
    var prev = ans[k] || {};
    ans[k] = {dim: q.dim, w: w, sA: prev.sA === undefined ? null : prev.sA, sB: prev.sB === undefined ? null : prev.sB};
    queue(t, ans[k]);
    scoreNext = "A";
    if (qi < T.questions.length - 1) qi++;
    save(); render();
  }
  function queue(t, a) {
    if (!serve || !a.w) return;
    var r = toSides(t, a); r.rater = st.rater;
    st.pending.push(r); save(); if (st.pending.length === 1) send();
  }
  var scoreNext = "A";
  // Digits score the current question (A, then B); they may come before or after its answer.
  function score(v) {
    if (!st.rater) { status("enter your rater name first", "warn"); document.getElementById("rater").focus(); return; }
    var t = T.trials[cur], q = T.questions[qi], k = akey(t.n, q.dim), ans = mineToWrite();
    var a = ans[k] || (ans[k] = {dim: q.dim, w: null, sA: null, sB: null});
    if (scoreNext === "A") { a.sA = v; scoreNext = "B"; }
    else { a.sB = v; scoreNext = "A"; if (a.w && a.sA !== null) queue(t, a); }
    save(); render();
  }
  function go(d) {
    var n = cur + d; if (n < 0 || n >= T.trials.length) return;
    pauseAll(); cur = n; qi = 0; scoreNext = "A"; save(); render();
  }
  function pauseAll() { document.querySelectorAll("audio").forEach(function (a) { a.pause(); }); }
  function play(which) {
    var mine = document.getElementById("audio-" + which), other = document.getElementById("audio-" + (which === "A" ? "B" : "A"));
    other.pause();
    if (mine.paused) { mine.currentTime = mine.ended ? 0 : mine.currentTime; mine.play(); } else { mine.pause(); }
  }
  function render() {
    var t = T.trials[cur];
    document.getElementById("pos").textContent = "item " + (cur + 1) + " of " + T.trials.length;
    document.getElementById("done").textContent = nDone() + " of " + T.trials.length + " answered";
    document.getElementById("fill").style.width = (100 * nDone() / T.trials.length) + "%";
    document.getElementById("instruction").textContent = t.instruction;
    document.getElementById("script").textContent = t.text;
    ["A", "B"].forEach(function (s) {
      var a = document.getElementById("audio-" + s), src = s === "A" ? t.left : t.right;
      if (a.getAttribute("src") !== src) a.setAttribute("src", src);
    });
    var box = document.getElementById("questions"); box.textContent = "";
    T.questions.forEach(function (q, i) {
      var a = mine()[akey(t.n, q.dim)];
      var d = el("div", "q" + (i === qi ? " current" : "")); d.setAttribute("data-dim", q.dim);
      d.appendChild(el("div", "", (i + 1) + ". " + q.text));
      var opts = el("div", "opts");
      [["A", "A is better (\u2190)"], ["tie", "tie (\u2193)"], ["B", "B is better (\u2192)"]].forEach(function (o) {
        var b = el("button", a && a.w === o[0] ? "on" : "", o[1]);
        b.addEventListener("click", function () { qi = i; answer(o[0]); }); opts.appendChild(b);
      });
      ["A", "B"].forEach(function (s) {
        var sel = el("select"); sel.setAttribute("aria-label", "score " + s);
        sel.appendChild(el("option", "", "score " + s + ": \u2014"));
        for (var v = 0; v <= 3; v++) { var o = el("option", "", String(v)); o.value = String(v); sel.appendChild(o); }
        var val = a ? (s === "A" ? a.sA : a.sB) : null;
        sel.value = (val === null || val === undefined) ? sel.options[0].value : String(val);
        sel.addEventListener("change", function () {
          if (!st.rater) { status("enter your rater name first", "warn"); render(); return; }
          var ans = mineToWrite(), k2 = akey(t.n, q.dim);
          var x = ans[k2] || (ans[k2] = {dim: q.dim, w: null, sA: null, sB: null});
          var v2 = sel.value === String(parseInt(sel.value, 10)) ? parseInt(sel.value, 10) : null;
          if (s === "A") x.sA = v2; else x.sB = v2; if (x.w && x.sA !== null && x.sB !== null) queue(t, x); save();
        });
        opts.appendChild(sel);
      });
      d.appendChild(opts); box.appendChild(d);
    });
  }
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.id === "rater") {
      if (e.key === "Enter") { e.target.blur(); e.preventDefault(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var k = e.key, done = true;
    if (k === "a" || k === "A") play("A");
    else if (k === "b" || k === "B") play("B");
    else if (k === "ArrowLeft") answer("A");
    else if (k === "ArrowRight") answer("B");
    else if (k === "ArrowDown" || k === "t") answer("tie");
    else if (k === "ArrowUp") { if (qi > 0) qi--; render(); }
    else if (k === "0" || k === "1" || k === "2" || k === "3") score(parseInt(k, 10));
    else if (k === "Enter" || k === "n") go(1);
    else if (k === "p") go(-1);
    else if (k === "e") exportCsv();
    else done = false;
    if (done) e.preventDefault();
  });
  var rater = document.getElementById("rater");
  rater.value = st.rater;
  rater.addEventListener("input", function () {
    st.rater = rater.value.trim(); scoreNext = "A"; save(); render();
  });
  document.getElementById("export").addEventListener("click", exportCsv);
  document.getElementById("prev").addEventListener("click", function () { go(-1); });
  document.getElementById("next").addEventListener("click", function () { go(1); });
  ["A", "B"].forEach(function (s) {
    var a = document.getElementById("audio-" + s), box = document.getElementById("clip-" + s);
    a.addEventListener("play", function () { box.className = "clip playing"; });
    a.addEventListener("pause", function () { box.className = "clip"; });
    document.getElementById("play-" + s).addEventListener("click", function () { play(s); });
  });
  if (location.protocol === "http:" || location.protocol === "https:") {
    fetch("api/hello").then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
      if (j && j.serve) { serve = true; document.getElementById("mode").textContent = "answers are saved on the server as you give them"; send(); }
    }).catch(function () {});
  }
  window.vbListen = {csv: csv, serve: function () { return serve; }, state: function () {
    return {rater: st.rater, answers: mine(), current: cur, pending: st.pending};
  }};
  render();
})();
