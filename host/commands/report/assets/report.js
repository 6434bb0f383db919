// acccheck report: reads the data the host inlined (#report-data), fills the summary, the API
// table (Tabulator), the per-API detail and three plots (Chart.js). Every text from the data goes
// in through textContent or Tabulator's escaped "plaintext" formatter, never as HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  // Rows arrive tab-joined (report_model.cpp): split once.
  for (const a of data.apis) for (const o of a.outputs) {
    o.cells = o.cells.split("\t");
    if (o.npu !== undefined) o.npu = o.npu.split("\t");
    if (o.gpu !== undefined) o.gpu = o.gpu.split("\t");
  }
  const compare = data.mode === "compare";
  const col = (name) => data.columns.indexOf(name);
  const sideCol = (name) => data.side_columns.indexOf(name);
  const RANK = { error: 4, warning: 3, pass: 2, SKIP: 1 };
  const COLOURS = { error: "#cf222e", warning: "#bf8700", pass: "#1a7f37", SKIP: "#8c959f" };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const blank = (s) => s === undefined || s === null || String(s).trim() === "";
  const num = (s) => (blank(s) ? NaN : Number(s));

  // ---- per-API facts ------------------------------------------------------------------------
  const iResult = col(compare ? "比对结果" : "Status");
  const iAlgo = col("比对算法");
  const iMaxAbs = col("最大绝对误差"), iCos = col("余弦相似度");
  const ratioColumns = data.columns.map((c, i) => [c, i]).filter(([c]) => compare && c.endsWith("比值"));

  function verdictOf(api) {
    let best = "";
    for (const v of [api.forward, api.backward]) if ((RANK[v] || 0) > (RANK[best] || 0)) best = v;
    return best || "SKIP";
  }
  function outputVerdict(o) { return iResult >= 0 ? o.cells[iResult] : ""; }
  function decidingOf(api) {
    const parts = [];
    for (const o of api.outputs) {
      if (compare) {
        if (outputVerdict(o) !== "error" && outputVerdict(o) !== "warning") continue;
        o.cells.forEach((c, i) => {
          const name = data.columns[i];
          if (name.endsWith("判定结果") && (c === "error" || c === "warning") && i > 0)
            parts.push(o.name.slice(api.name.length + 1) + " " + data.columns[i - 1] + "=" + o.cells[i - 1]);
        });
      } else if (outputVerdict(o) !== "pass") {
        parts.push(o.name.slice(api.name.length + 1) + " 余弦相似度=" + (o.cells[iCos] || "") + " 最大绝对误差=" + (o.cells[iMaxAbs] || ""));
      }
    }
    return parts.join("; ");
  }
  function standardOf(api) {
    if (iAlgo < 0) return "";
    const algos = [];
    for (const o of api.outputs) { const a = o.cells[iAlgo]; if (!blank(a) && !algos.includes(a)) algos.push(a); }
    return algos.join(", ");
  }
  // How bad an API is, for the call-order plot: the largest ratio (compare) or max abs error.
  function severityOf(api) {
    let s = NaN;
    for (const o of api.outputs) {
      const values = compare ? ratioColumns.map(([, i]) => num(o.cells[i])) : [num(o.cells[iMaxAbs])];
      for (const v of values) if (isFinite(v) && v > 0 && !(s >= v)) s = v;
    }
    return s;
  }

  const rows = data.apis.map((a, idx) => ({
    idx, order: a.order, name: a.name, verdict: verdictOf(a), forward: a.forward, backward: a.backward,
    standard: standardOf(a), deciding: decidingOf(a), inputs: (a.inputs || []).join(", "), message: a.message,
  }));

  // ---- header, summary -------------------------------------------------------------------------
  document.getElementById("title").textContent = data.title;
  document.getElementById("subtitle").textContent = (compare ? "NPU run judged against the GPU (reference) run" :
    "device under test against the CPU benchmark") + " · generated " + data.generated;
  const summary = document.getElementById("summary");
  function card(n, label, cls, id) {
    const c = el("div", { class: "card " + (cls || ""), id: id });
    c.appendChild(el("div", { class: "n" }, String(n)));
    c.appendChild(el("div", { class: "l" }, label));
    summary.appendChild(c);
  }
  const count = (pred) => rows.filter(pred).length;
  card(rows.length, "APIs", "", "count-apis");
  for (const v of ["error", "warning", "pass", "SKIP"]) card(count((r) => r.verdict === v), "APIs " + v, v === "SKIP" ? "skip" : v, "count-" + v);
  for (const dir of ["forward", "backward"])
    card(count((r) => r[dir] === "error"), dir + " errors", "error", "count-" + dir + "-error");
  const outputs = data.apis.reduce((n, a) => n + a.outputs.length, 0);
  card(outputs, "outputs judged", "", "count-outputs");

  const sources = document.getElementById("sources");
  for (const [k, v] of Object.entries(data.sources)) sources.appendChild(el("div", {}, k + ": " + v));

  // ---- table -----------------------------------------------------------------------------------
  const standardSelect = document.getElementById("filter-standard");
  const standards = [...new Set(rows.flatMap((r) => r.standard.split(", ").filter((s) => s)))].sort();
  for (const s of standards) standardSelect.appendChild(el("option", { value: s }, s));
  if (!compare) standardSelect.disabled = true;

  const verdictFormatter = (cell) => {
    const v = cell.getValue() || "";
    const span = el("span", { class: "v-" + v.trim() }, v);
    return span;
  };
  // Tabulator's `tooltip: true` puts the cell's value in through innerHTML: a dtype or message such
  // as an img element with an onerror attribute would become markup. The tooltip is built here, text only.
  const textTooltip = (e, cell) => {
    const v = cell.getValue();
    if (v === undefined || v === null || v === "") return "";
    const tip = document.createElement("div");
    tip.textContent = String(v);
    return tip;
  };
  const table = new Tabulator("#api-table", {
    // Every row in the DOM for small runs (what the tests count); only the visible ones for large.
    data: rows, index: "idx", layout: "fitColumns", maxHeight: "420px", renderVertical: rows.length > 2000 ? "virtual" : "basic",
    initialSort: [{ column: "order", dir: "asc" }],
    columns: [
      { title: "#", field: "order", width: 60, sorter: "number" },
      { title: "API", field: "name", formatter: "plaintext", widthGrow: 2 },
      { title: "verdict", field: "verdict", formatter: verdictFormatter, width: 90,
        sorter: (a, b) => (RANK[a] || 0) - (RANK[b] || 0) },
      { title: "forward", field: "forward", formatter: verdictFormatter, width: 90 },
      { title: "backward", field: "backward", formatter: verdictFormatter, width: 90 },
      { title: compare ? "standard" : "—", field: "standard", formatter: "plaintext", visible: compare },
      { title: "deciding values", field: "deciding", formatter: "plaintext", widthGrow: 3, tooltip: textTooltip },
      { title: "inputs", field: "inputs", formatter: "plaintext", widthGrow: 2, tooltip: textTooltip },
      { title: "message", field: "message", formatter: "plaintext", widthGrow: 2, tooltip: textTooltip },
    ],
  });

  const text = document.getElementById("filter-text"), verdict = document.getElementById("filter-verdict");
  function matches(r) {
    const q = text.value.trim().toLowerCase();
    if (q && !r.name.toLowerCase().includes(q)) return false;
    if (verdict.value && r.verdict !== verdict.value) return false;
    if (standardSelect.value && !r.standard.split(", ").includes(standardSelect.value)) return false;
    return true;
  }
  document.getElementById("total-count").textContent = String(rows.length);
  function applyFilters() {
    table.setFilter(matches);
    // Counted from the same predicate: Tabulator applies filters asynchronously while building.
    document.getElementById("visible-count").textContent = String(rows.filter(matches).length);
  }
  for (const e of [text, verdict, standardSelect]) e.addEventListener("input", applyFilters);

  // ---- detail of one API -----------------------------------------------------------------------
  function tableOf(header, body) {
    const t = el("table");
    const tr = el("tr");
    for (const h of header) tr.appendChild(el("th", {}, h));
    t.appendChild(tr);
    for (const r of body) {
      const row = el("tr");
      r.forEach((c, i) => row.appendChild(el("td", i > 0 && RANK[c] ? { class: "v-" + c } : {}, c)));
      t.appendChild(row);
    }
    return t;
  }
  function showDetail(idx) {
    const a = data.apis[idx];
    const d = document.getElementById("detail");
    d.replaceChildren();
    d.appendChild(el("h2", {}, a.name + " — forward " + a.forward + ", backward " + a.backward));
    if (!blank(a.message)) d.appendChild(el("p", {}, a.message));
    if (a.inputs && a.inputs.length) d.appendChild(el("p", {}, "inputs: " + a.inputs.join(", ")));
    if (a.outputs.length) {
      const used = data.columns.map((c, i) => i).filter((i) => a.outputs.some((o) => !blank(o.cells[i])));
      d.appendChild(el("h3", {}, compare ? "compare (NPU vs GPU)" : "device vs benchmark"));
      d.appendChild(tableOf(["output", ...used.map((i) => data.columns[i])],
                            a.outputs.map((o) => [o.name.slice(a.name.length + 1), ...used.map((i) => o.cells[i])])));
      const sided = a.outputs.filter((o) => o.npu || o.gpu);
      if (!sided.length && data.side_columns.length)
        d.appendChild(el("p", { class: "hint" }, "Both sides' run_ut metrics are kept for flagged APIs and the first " +
                                                 data.sided_apis + " APIs; see the run_ut details files for this one."));
      if (sided.length) {
        d.appendChild(el("h3", {}, "run_ut metrics of both sides"));
        for (const o of sided) {
          const body = data.side_columns.map((c, i) => [c, o.npu ? o.npu[i] : "", o.gpu ? o.gpu[i] : ""])
            .filter((r) => !blank(r[1]) || !blank(r[2]));
          d.appendChild(el("h4", {}, o.name));
          d.appendChild(tableOf(["metric", "NPU", "GPU"], body));
        }
      }
    }
    if (a.stack && a.stack.length) {
      d.appendChild(el("h3", {}, "stack"));
      d.appendChild(el("pre", {}, a.stack.join("\n")));
    }
    d.setAttribute("data-api", a.name);
  }
  table.on("rowClick", (e, row) => showDetail(row.getData().idx));

  // ---- state from the address (#verdict=error&q=tanh&standard=...&api=NAME) ------------------
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("q")) text.value = params.get("q");
  if (params.get("verdict")) verdict.value = params.get("verdict");
  if (params.get("standard")) standardSelect.value = params.get("standard");
  table.on("tableBuilt", () => {
    applyFilters();
    const api = params.get("api");
    const hit = api ? rows.find((r) => r.name === api) : null;
    if (hit) showDetail(hit.idx);
    document.body.setAttribute("data-state", "ready");
  });

  // ---- plots -----------------------------------------------------------------------------------
  // A plot that fails (a browser without canvas, an odd value) must not take the table with it.
  const plot = (name, draw) => { try { draw(); } catch (e) { console.error("plot " + name + ": " + e); } };
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  // Not red, green or amber: those colours mean verdicts in the other plots.
  const palette = ["#0969da", "#8250df", "#1b7c83", "#bc4c00", "#6e7781", "#4b5563", "#0550ae"];
  const logTicks = { callback: (v) => { const e = Math.log10(v); return Math.abs(e - Math.round(e)) < 1e-9 ? "1e" + Math.round(e) : ""; } };

  function histogram(canvasId, caption, groups, xlabel) {
    document.getElementById(caption).textContent = xlabel;
    const lo = -4, hi = 4, step = 0.5, bins = [];
    for (let x = lo; x < hi; x += step) bins.push(x);
    const datasets = Object.entries(groups).map(([name, values], k) => ({
      label: name, backgroundColor: palette[k % palette.length],
      data: bins.map((b) => values.filter((v) => Math.max(lo, Math.min(hi - 1e-9, Math.log10(v))) >= b &&
                                               Math.max(lo, Math.min(hi - 1e-9, Math.log10(v))) < b + step).length),
    }));
    new Chart(document.getElementById(canvasId), {
      type: "bar", data: { labels: bins.map((b) => "1e" + b.toFixed(1)), datasets },
      options: { maintainAspectRatio: false, scales: { x: { stacked: true, title: { display: true, text: "log10 bin (clamped to ±4)" } },
                                                     y: { stacked: true, title: { display: true, text: "outputs" } } } },
    });
  }
  if (compare) {
    const groups = {};
    for (const a of data.apis) for (const o of a.outputs) {
      const algo = iAlgo >= 0 && !blank(o.cells[iAlgo]) ? o.cells[iAlgo] : "?";
      for (const [, i] of ratioColumns) { const v = num(o.cells[i]); if (isFinite(v) && v > 0) (groups[algo] = groups[algo] || []).push(v); }
    }
    plot("ratios", () => histogram("plot-ratios", "plot1-caption", groups, "Distribution of the NPU/GPU ratios, by standard"));
  } else {
    const groups = {};
    const iDtype = col("DEVICE Dtype");
    for (const a of data.apis) for (const o of a.outputs) {
      const v = num(o.cells[iMaxAbs]); if (isFinite(v) && v > 0) (groups[o.cells[iDtype] || "?"] = groups[o.cells[iDtype] || "?"] || []).push(v);
    }
    plot("ratios", () => histogram("plot-ratios", "plot1-caption", groups, "Distribution of the max absolute error against the benchmark, by dtype"));
  }

  // At most ~20,000 points: every flagged one, passing ones evenly thinned (a browser draws 10^5 slowly).
  function thin(points) {
    const passing = points.filter((p) => p.v === "pass"), rest = points.filter((p) => p.v !== "pass");
    const keep = Math.max(1, 20000 - rest.length), stride = Math.max(1, Math.ceil(passing.length / keep));
    return rest.concat(passing.filter((p, i) => i % stride === 0));
  }
  function scatter(canvasId, all, xlabel, ylabel, diagonal) {
    const points = thin(all);
    const byVerdict = {};
    for (const p of points) (byVerdict[p.v] = byVerdict[p.v] || []).push(p);
    const datasets = Object.entries(byVerdict).map(([v, pts]) => ({
      label: v, data: pts, backgroundColor: COLOURS[v] || "#0969da", pointRadius: 3,
    }));
    if (diagonal && points.length) {
      let lo = Infinity, hi = -Infinity;  // a loop, not Math.min(...xs): 10^5 arguments overflow the stack
      for (const p of points) { lo = Math.min(lo, p.x, p.y); hi = Math.max(hi, p.x, p.y); }
      datasets.push({ label: "NPU = GPU", type: "line", data: [{ x: lo, y: lo }, { x: hi, y: hi }],
                      borderColor: "#8c959f", borderDash: [4, 4], pointRadius: 0 });
    }
    new Chart(document.getElementById(canvasId), {
      type: "scatter", data: { datasets },
      options: { maintainAspectRatio: false,
                 plugins: { tooltip: { callbacks: { label: (c) => (c.raw.name || "") + " (" + c.raw.x.toPrecision(3) + ", " + c.raw.y.toPrecision(3) + ")" } } },
                 scales: { x: { type: "logarithmic", ticks: logTicks, title: { display: true, text: xlabel } },
                           y: { type: "logarithmic", ticks: logTicks, title: { display: true, text: ylabel } } } },
    });
  }
  const sideMaxAbs = sideCol("最大绝对误差");
  if (compare) {
    const pts = [];
    for (const a of data.apis) for (const o of a.outputs) {
      if (!o.npu || !o.gpu || sideMaxAbs < 0) continue;
      const x = num(o.gpu[sideMaxAbs]), y = num(o.npu[sideMaxAbs]);
      if (x > 0 && y > 0 && isFinite(x) && isFinite(y)) pts.push({ x, y, v: outputVerdict(o) || "?", name: o.name });
    }
    document.getElementById("plot2-caption").textContent = pts.length ?
      "NPU vs GPU max absolute error against the benchmark, per output" :
      "NPU vs GPU error scatter: give the run_ut details of both sides (--npu, --gpu)";
    plot("scatter", () => scatter("plot-scatter", pts, "GPU max abs error", "NPU max abs error", true));
  } else {
    const pts = [];
    for (const a of data.apis) for (const o of a.outputs) {
      const x = num(o.cells[iMaxAbs]), y = 1 - num(o.cells[iCos]);
      if (x > 0 && y > 0 && isFinite(x) && isFinite(y)) pts.push({ x, y, v: outputVerdict(o) || "?", name: o.name });
    }
    document.getElementById("plot2-caption").textContent = "Max absolute error vs 1 − cosine similarity, per output";
    plot("scatter", () => scatter("plot-scatter", pts, "max abs error", "1 − cosine similarity", false));
  }

  {
    const pts = rows.map((r) => ({ x: r.order, y: severityOf(data.apis[r.idx]), v: r.verdict, name: r.name }))
      .filter((p) => isFinite(p.y) && p.y > 0);
    const byVerdict = {};
    for (const p of pts) (byVerdict[p.v] = byVerdict[p.v] || []).push(p);
    document.getElementById("plot3-caption").textContent = compare ?
      "Where the errors sit in the model's call order: largest NPU/GPU ratio per API" :
      "Where the errors sit in the model's call order: largest max absolute error per API";
    plot("order", () => new Chart(document.getElementById("plot-order"), {
      type: "scatter",
      data: { datasets: Object.entries(byVerdict).map(([v, p]) => ({ label: v, data: p, backgroundColor: COLOURS[v] || "#0969da", pointRadius: 4 })) },
      options: { maintainAspectRatio: false,
                 plugins: { tooltip: { callbacks: { label: (c) => c.raw.name + ": " + c.raw.y.toPrecision(3) } } },
                 scales: { x: { title: { display: true, text: "call order (forward entries of the dump)" } },
                           y: { type: "logarithmic", ticks: logTicks, title: { display: true, text: compare ? "largest ratio" : "max abs error" } } } },
    }));
  }

})();
