/// The Mustache templates of the server's pages. They live in the binary, not in resource files,
/// so that a `webimage` copied alone to a machine (as docs/deploy.md installs it) still has its
/// pages; the pages load nothing from elsewhere (no CDN scripts, fonts or images).
enum PageTemplates {
    /// The start of both pages, with their shared look; the context's `title` names the page.
    static let head = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>webimage {{title}}</title>
        <style>
          :root { color-scheme: light dark; --line: #8884; --muted: #888; --accent: #2f6fdd; --bad: #c0392b; }
          * { box-sizing: border-box; }
          body { margin: 0; font: 14px/1.45 system-ui, sans-serif; }
          header { display: flex; gap: 1em; align-items: baseline; padding: .8em 1.2em; border-bottom: 1px solid var(--line); }
          header h1 { font-size: 1.2em; margin: 0; }
          header span { color: var(--muted); }
          main { padding: 1em 1.2em; }
          h2 { font-size: 1em; margin: 1.2em 0 .4em; }
          table { border-collapse: collapse; }
          td, th { padding: .2em .8em .2em 0; text-align: left; border-bottom: 1px solid var(--line); vertical-align: top; }
          td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
          code, .url { font: 12px/1.4 ui-monospace, monospace; word-break: break-all; }
          .muted { color: var(--muted); }
          .error { color: var(--bad); font-weight: 600; white-space: pre-wrap; }
        </style>
        """#

    /// `/playground`: controls on the left, the original and the result side by side.
    static let playground = #"""
        {{> head}}
        <style>
          .layout { display: grid; grid-template-columns: 19em 1fr; gap: 1.5em; }
          form label { display: grid; grid-template-columns: 7em 1fr; align-items: center; gap: .5em; margin: .3em 0; }
          form input, form select { width: 100%; font: inherit; padding: .15em .3em; }
          form input[type=checkbox] { width: auto; }
          fieldset { border: 1px solid var(--line); margin: 0 0 .8em; padding: .4em .8em; }
          .images { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; align-items: start; }
          figure { margin: 0; }
          figure img { max-width: 100%; display: block; background: repeating-conic-gradient(#8883 0 25%, transparent 0 50%) 0 0 / 16px 16px; }
          #original { cursor: crosshair; }
          .frame { position: relative; display: inline-block; max-width: 100%; }
          #focus { position: absolute; width: 14px; height: 14px; margin: -7px 0 0 -7px; border: 2px solid #fff; border-radius: 50%; box-shadow: 0 0 0 2px #000; display: none; pointer-events: none; }
          figcaption { margin-top: .4em; }
          .urls div { margin: .3em 0; }
          .urls button { font: inherit; margin-left: .5em; }
        </style>
        </head>
        <body data-signs="{{signs}}" data-unsafe="{{unsafe}}">
        <header><h1>webimage playground</h1><span>imgproxy-compatible options, processed by this node · version {{version}}</span></header>
        <main class="layout">
        <form id="controls" autocomplete="off">
          <fieldset><legend>Source</legend>
            <label>Image <select id="source-select">
              {{#demos}}<option value="{{url}}" data-original="/playground/demo/{{name}}">{{label}}</option>{{/demos}}
              <option value="url">A URL…</option>
            </select></label>
            <label>URL <input id="source-url" type="url" placeholder="https://example.com/photo.jpg" disabled></label>
          </fieldset>
          <fieldset><legend>Size</legend>
            <label>Width <input id="width" inputmode="numeric" value="400"></label>
            <label>Height <input id="height" inputmode="numeric" value="300"></label>
            <label>Resizing <select id="type">
              <option>fit</option><option selected>fill</option><option>fill-down</option><option>force</option><option>auto</option>
            </select></label>
            <label>Gravity <select id="gravity">
              <option value="ce">centre</option><option value="no">north</option><option value="so">south</option>
              <option value="ea">east</option><option value="we">west</option><option value="noea">north-east</option>
              <option value="nowe">north-west</option><option value="soea">south-east</option><option value="sowe">south-west</option>
              <option value="sm">smart</option><option value="fp">focus point (click the original)</option>
            </select></label>
            <label>DPR <input id="dpr" inputmode="decimal" value="1"></label>
          </fieldset>
          <fieldset><legend>Output</legend>
            <label>Format <select id="format">
              <option value="">auto (Accept)</option>
              {{#formats}}<option value="{{.}}">{{.}}</option>{{/formats}}
            </select></label>
            <label>Quality <input id="quality" inputmode="numeric" placeholder="server default"></label>
          </fieldset>
          <fieldset><legend>Effects</legend>
            <label>Blur <input id="blur" inputmode="decimal" value="0"></label>
            <label>Sharpen <input id="sharpen" inputmode="decimal" value="0"></label>
            <label>Rotate <select id="rotate"><option>0</option><option>90</option><option>180</option><option>270</option></select></label>
            <label>Flip <span><input id="flip-h" type="checkbox"> horizontal <input id="flip-v" type="checkbox"> vertical</span></label>
            <label>Background <input id="background" placeholder="hex, e.g. ffffff"></label>
            <label>Padding <input id="padding" inputmode="numeric" value="0"></label>
          </fieldset>
        </form>
        <section>
          <div class="urls">
            <div>Path: <code id="url-unsigned" class="url"></code></div>
            <div>URL: <code id="url-signed" class="url"></code><button type="button" id="copy">Copy</button></div>
          </div>
          <p id="error" class="error" role="alert" hidden></p>
          <div class="images">
            <figure>
              <div class="frame"><img id="original" alt="the original image"><span id="focus"></span></div>
              <figcaption>Original <span id="original-size" class="muted"></span></figcaption>
            </figure>
            <figure>
              <img id="result" alt="the processed result">
              <figcaption>Result: <span id="result-size"></span> · <span id="result-bytes"></span> bytes ·
                <span id="result-format"></span><br><span class="muted">Server-Timing: <span id="result-timing"></span></span></figcaption>
            </figure>
          </div>
        </section>
        </main>
        <script>
        "use strict";
        const $ = (id) => document.getElementById(id);
        const token = new URLSearchParams(location.search).get("token");
        // The Accept header a browser sends for <img>, so that "auto" shows what negotiation picks.
        const imageAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8";
        let focus = null, latest = 0, timer = null, objectURL = null;

        function source() {
          const select = $("source-select");
          return select.value === "url" ? $("source-url").value.trim() : select.value;
        }
        function base64url(text) {
          const bytes = new TextEncoder().encode(text);
          let binary = "";
          bytes.forEach((byte) => { binary += String.fromCharCode(byte); });
          return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        }
        function value(id) { return $(id).value.trim(); }
        function optionsPath() {
          const parts = ["rs:" + value("type") + ":" + value("width") + ":" + value("height")];
          const gravity = value("gravity");
          if (gravity === "fp") {
            if (focus) parts.push("g:fp:" + focus.x + ":" + focus.y);
          } else if (gravity !== "ce") parts.push("g:" + gravity);
          if (value("dpr") && value("dpr") !== "1") parts.push("dpr:" + value("dpr"));
          if (value("quality")) parts.push("q:" + value("quality"));
          if (value("blur") && value("blur") !== "0") parts.push("bl:" + value("blur"));
          if (value("sharpen") && value("sharpen") !== "0") parts.push("sh:" + value("sharpen"));
          if (value("rotate") !== "0") parts.push("rot:" + value("rotate"));
          if ($("flip-h").checked || $("flip-v").checked) parts.push("fl:" + ($("flip-h").checked ? 1 : 0) + ":" + ($("flip-v").checked ? 1 : 0));
          if (value("background")) parts.push("bg:" + value("background").replace(/^#/, ""));
          if (value("padding") && value("padding") !== "0") parts.push("pd:" + value("padding"));
          const format = value("format");
          return "/" + parts.join("/") + "/" + base64url(source()) + (format ? "." + format : "");
        }
        function showError(text) {
          $("error").textContent = text;
          $("error").hidden = false;
          $("result").removeAttribute("src");
          for (const id of ["result-size", "result-bytes", "result-format", "result-timing"]) $(id).textContent = "";
        }
        function showOriginal() {
          const select = $("source-select");
          const option = select.options[select.selectedIndex];
          const url = select.value === "url" ? source() : option.dataset.original;
          if (url && $("original").getAttribute("src") !== url) $("original").src = url;
        }
        // Every change asks again; only the newest answer is shown, whatever order answers arrive in.
        async function update() {
          const sequence = ++latest;
          showOriginal();
          if (!source()) { showError("choose an image or give a URL"); return; }
          const path = optionsPath();
          $("url-unsigned").textContent = path;
          const headers = token ? { "X-Playground-Token": token } : {};
          let urls;
          try {
            const signing = await fetch("/playground/sign?path=" + encodeURIComponent(path), { headers });
            if (!signing.ok) { if (sequence === latest) showError(signing.status + " " + await signing.text()); return; }
            urls = await signing.json();
          } catch (error) { if (sequence === latest) showError(String(error)); return; }
          if (sequence !== latest) return;
          const request = urls.signed || urls.unsafe;
          $("url-signed").textContent = request ? location.origin + request : "(this node holds no key and refuses unsigned URLs)";
          if (!request) return;
          const started = performance.now();
          let response, blob;
          try {
            response = await fetch(request, { headers: { Accept: imageAccept } });
            if (sequence !== latest) return;
            if (!response.ok) { showError(response.status + " " + (await response.text()).trim()); return; }
            blob = await response.blob();
          } catch (error) { if (sequence === latest) showError(String(error)); return; }
          if (sequence !== latest) return;
          $("error").hidden = true;
          if (objectURL) URL.revokeObjectURL(objectURL);
          objectURL = URL.createObjectURL(blob);
          const result = $("result");
          result.onload = () => {
            if (sequence !== latest) return;
            $("result-size").textContent = result.naturalWidth + "x" + result.naturalHeight;
            $("result-bytes").textContent = String(blob.size);
            $("result-format").textContent = response.headers.get("Content-Type");
            $("result-timing").textContent = (response.headers.get("Server-Timing") || "") + ` (page: ${Math.round(performance.now() - started)} ms)`;
            result.dataset.url = request;
            result.dataset.sequence = String(sequence);
          };
          result.src = objectURL;
        }
        function schedule() {
          clearTimeout(timer);
          timer = setTimeout(update, 250);
        }
        $("controls").addEventListener("input", schedule);
        $("controls").addEventListener("change", schedule);
        $("source-select").addEventListener("change", () => {
          $("source-url").disabled = $("source-select").value !== "url";
          focus = null; $("focus").style.display = "none";
        });
        $("original").addEventListener("click", (event) => {
          const image = event.currentTarget;
          focus = { x: (event.offsetX / image.clientWidth).toFixed(2), y: (event.offsetY / image.clientHeight).toFixed(2) };
          $("focus").style.left = event.offsetX + "px";
          $("focus").style.top = event.offsetY + "px";
          $("focus").style.display = "block";
          $("gravity").value = "fp";
          schedule();
        });
        $("original").addEventListener("load", () => {
          $("original-size").textContent = $("original").naturalWidth + "x" + $("original").naturalHeight;
        });
        $("copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("url-signed").textContent));
        update();
        </script>
        </body>
        </html>
        """#

    /// `/status`: the frame, which fetches `/status/figures` every two seconds.
    static let status = #"""
        {{> head}}
        <style>
          .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(22em, 1fr)); gap: 0 2em; }
          .big { font-size: 1.6em; font-variant-numeric: tabular-nums; }
        </style>
        </head>
        <body>
        <header><h1>webimage status</h1><span>version {{version}} · refreshed every 2 s · <span id="refreshed"></span></span></header>
        <main id="figures">{{> figures}}</main>
        <script>
        "use strict";
        async function refresh() {
          try {
            const response = await fetch("/status/figures", { cache: "no-store" });
            if (response.ok) {
              document.getElementById("figures").innerHTML = await response.text();
              document.getElementById("refreshed").textContent = "at " + new Date().toLocaleTimeString();
            }
          } catch (error) {
            document.getElementById("refreshed").textContent = "cannot reach the node: " + error;
          }
        }
        setInterval(refresh, 2000);
        </script>
        </body>
        </html>
        """#

    /// The figures of `/status`, the part that refreshes.
    static let figures = #"""
        <div class="grid">
        <section>
          <h2>Node</h2>
          <table>
            <tr><th>Uptime</th><td id="uptime">{{uptime}}</td></tr>
            <tr><th>Listening on</th><td>{{listen}}</td></tr>
            {{#configuration}}<tr><th>{{name}}</th><td>{{value}}</td></tr>{{/configuration}}
          </table>
        </section>
        <section>
          <h2>Requests</h2>
          <p><span class="big" id="rate-minute">{{perSecondLastMinute}}</span> per second over the last minute,
            <span id="rate-five">{{perSecondLastFiveMinutes}}</span> over five; <span id="requests-total">{{requestsTotal}}</span> since start.</p>
          <table id="statuses">
            <tr><th>Status</th><th class="number">Since start</th></tr>
            {{#statuses}}<tr><td>{{status}}</td><td class="number" id="status-{{status}}">{{count}}</td></tr>{{/statuses}}
          </table>
          <h2>Status mix by minute</h2>
          <table id="minutes">
            <tr><th>Minute</th><th class="number">2xx</th><th class="number">3xx</th><th class="number">4xx</th><th class="number">5xx</th></tr>
            {{#minutes}}<tr><td>{{label}}</td><td class="number">{{ok}}</td><td class="number">{{redirect}}</td><td class="number">{{client}}</td><td class="number">{{server}}</td></tr>{{/minutes}}
          </table>
        </section>
        <section>
          <h2>Latency, last five minutes</h2>
          <table>
            <tr><th>p50</th><td class="number" id="p50">{{p50}}</td></tr>
            <tr><th>p95</th><td class="number" id="p95">{{p95}}</td></tr>
            <tr><th>p99</th><td class="number" id="p99">{{p99}}</td></tr>
          </table>
          <h2>Work</h2>
          <table>
            <tr><th>Running</th><td class="number" id="running">{{running}}</td></tr>
            <tr><th>Queued</th><td class="number" id="queued">{{queued}}</td></tr>
            <tr><th>Processed since start</th><td class="number" id="processed">{{processed}}</td></tr>
          </table>
        </section>
        <section>
          <h2>Caches</h2>
          <table id="caches">
            <tr><th>Tier</th><th class="number">Hits</th><th class="number">Share of lookups</th></tr>
            {{#tiers}}<tr><td>{{tier}}</td><td class="number" id="hits-{{tier}}">{{hits}}</td><td class="number">{{share}}</td></tr>{{/tiers}}
            <tr><td>miss (processed or failed)</td><td class="number" id="misses">{{misses}}</td><td class="number">{{missShare}}</td></tr>
          </table>
          <h2>Source fetch errors</h2>
          {{^sourceErrors}}<p class="muted" id="no-source-errors">none since start</p>{{/sourceErrors}}
          <table id="source-errors">
            {{#sourceErrors}}<tr><td>{{kind}}</td><td class="number" id="source-error-{{kind}}">{{count}}</td></tr>{{/sourceErrors}}
          </table>
        </section>
        </div>
        <section>
          <h2>Slowest requests, last five minutes</h2>
          {{^slowest}}<p class="muted">none yet</p>{{/slowest}}
          <table id="slowest">
            {{#slowest}}<tr><td class="number">{{milliseconds}} ms</td><td class="number">{{status}}</td><td class="number">{{bytes}} B</td><td class="number">{{ago}}</td><td><code class="url">{{path}}</code></td></tr>{{/slowest}}
          </table>
        </section>
        """#
}
