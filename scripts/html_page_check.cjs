// Open an `aiscan roofline -o report.html` page in headless Chromium and check that its
// interactions work: the script runs without errors and fetches nothing, a point's tooltip
// shows its figures, a device toggle and a memory-level toggle hide what they name, the
// wheel zooms and a double-click restores the whole plot. Writes screenshots. Not run by
// CI (no browser there); tests/test_html_browser.py runs it where Chromium is found.
//
// Set-up, once, in a directory of your own (the package ships a Chromium binary):
//   npm install --prefix /tmp/aiscan-browser puppeteer-core @sparticuz/chromium
// Usage:
//   NODE_PATH=/tmp/aiscan-browser/node_modules node scripts/html_page_check.cjs \
//       report.html shots/report          # writes shots/report.png, -tip.png, -toggled.png
// Prints one JSON line of what it found; exits 1 when a check fails, 2 on a usage error.
"use strict";

const path = require("path");

async function main() {
  const [page_path, shot_prefix] = process.argv.slice(2);
  if (!page_path || !shot_prefix) {
    console.error("usage: node scripts/html_page_check.cjs PAGE.html SHOT_PREFIX");
    process.exit(2);
  }
  const chromium = require("@sparticuz/chromium");
  const puppeteer = require("puppeteer-core");
  const executablePath = process.env.CHROMIUM_PATH || (await chromium.executablePath());
  const browser = await puppeteer.launch({
    executablePath, headless: true, args: chromium.args,
    defaultViewport: { width: 1400, height: 1200 },  // the controls and the plot
  });
  const failures = [];
  const found = {};
  try {
    const page = await browser.newPage();
    const url = "file://" + path.resolve(page_path);
    const requests = [];
    const errors = [];
    page.on("request", (request) => { if (request.url() !== url) requests.push(request.url()); });
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(url, { waitUntil: "load" });
    const check = (ok, what) => { if (!ok) failures.push(what); };

    found.circles = await page.$$eval("#hover circle", (cs) => cs.length);
    found.controls_shown = await page.$eval("#aiscan-controls", (c) => !c.hidden);
    check(found.circles > 0, "no hover circles");
    check(found.controls_shown, "the controls stay hidden: the script did not run");
    await page.screenshot({ path: shot_prefix + ".png" });

    // Tooltip: the pointer on a point shows the data-tip of the circle under it.
    const target = await page.$$eval("#hover circle", (cs) => {
      const r = cs[0].getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    });
    await page.mouse.move(target.x, target.y);
    const tip = await page.evaluate(({ x, y }) => {
      const under = document.elementFromPoint(x, y);
      const box = document.getElementById("aiscan-tip");
      return { shown: !box.hidden, text: box.textContent,
               expected: under && under.getAttribute("data-tip"),
               titles: document.querySelectorAll("#hover circle title").length };
    }, target);
    found.tooltip = tip.text;
    check(tip.shown && tip.text && tip.text === tip.expected, "no tooltip on a point");
    check(tip.titles === 0, "the browser's <title> tooltips were not moved aside");
    await page.screenshot({ path: shot_prefix + "-tip.png" });
    await page.mouse.move(1, 1);

    // Toggles: the first device, then the first memory level.
    const toggled = await page.evaluate(() => {
      const visible = (node) => getComputedStyle(node).display !== "none";
      const result = {};
      for (const kind of ["device", "level"]) {
        const box = document.querySelector(`input[data-toggle="${kind}"]`);
        if (!box) { result[kind] = null; continue; }
        const circles = [...document.querySelectorAll(`#hover circle[data-${kind}]`)]
          .filter((c) => c.getAttribute(`data-${kind}`) === box.value);
        const before = circles.filter(visible).length;
        box.click();
        const hidden = circles.filter((c) => !visible(c)).length;
        result[kind] = { value: box.value, points: circles.length, before, hidden };
        if (kind === "device") box.click();  // back on, so the level's points show
      }
      return result;
    });
    found.toggled = toggled;
    for (const kind of ["device", "level"]) {
      const t = toggled[kind];
      check(t !== null, `no ${kind} toggle`);
      if (t) check(t.points > 0 && t.before === t.points && t.hidden === t.points,
                   `the ${kind} toggle did not hide its ${t.points} points`);
    }
    await page.screenshot({ path: shot_prefix + "-toggled.png" });
    await page.evaluate(() => document.querySelectorAll("input[data-toggle]")
      .forEach((box) => { if (!box.checked) box.click(); }));

    // Zoom: the wheel narrows the viewBox, a double-click restores it.
    const svg = await page.$(".plot svg");
    const box = await svg.boundingBox();
    const width = () => page.$eval(".plot svg", (s) => s.viewBox.baseVal.width);
    const whole = await width();
    await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2);
    for (let k = 0; k < 4; k++) await page.mouse.wheel({ deltaY: -100 });
    const zoomed = await width();
    await page.screenshot({ path: shot_prefix + "-zoomed.png" });
    await page.mouse.click(box.x + 5, box.y + 5, { clickCount: 2 });
    const restored = await width();
    found.zoom = { whole, zoomed, restored };
    check(zoomed < whole * 0.5, "the wheel did not zoom");
    check(Math.abs(restored - whole) < 1e-6, "a double-click did not restore the whole plot");

    found.requests = requests;
    found.errors = errors;
    check(requests.length === 0, "the page fetched " + requests.join(", "));
    check(errors.length === 0, "script errors: " + errors.join("; "));
  } finally {
    await browser.close();
  }
  found.failures = failures;
  console.log(JSON.stringify(found));
  process.exit(failures.length ? 1 : 0);
}

main().catch((error) => { console.error(String(error)); process.exit(2); });
