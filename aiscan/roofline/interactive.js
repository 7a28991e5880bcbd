// The HTML roofline's interactions, inlined in the page by aiscan/roofline/interactive.py:
// zoom (wheel) and pan (drag) by the SVG's viewBox, a tooltip per point (its data-tip), and
// toggles per device and per memory level. Plain DOM, no library, nothing fetched: the page
// works offline, and without scripts it is the static SVG with its <title> tooltips.
(function () {
  "use strict";
  var plot = document.querySelector(".plot svg");
  if (!plot) return;
  var tags = JSON.parse(document.getElementById("aiscan-tags").textContent);
  var full = plot.viewBox.baseVal;
  var home = [full.x, full.y, full.width, full.height];
  var view = home.slice();
  var tip = document.getElementById("aiscan-tip");

  function show(box) {
    view = box;
    plot.setAttribute("viewBox", box.join(" "));
    document.getElementById("aiscan-zoom").textContent =
      (home[2] / box[2]).toFixed(1) + "×";
  }

  function svgPoint(event) {
    var r = plot.getBoundingClientRect();
    return [view[0] + ((event.clientX - r.left) / r.width) * view[2],
            view[1] + ((event.clientY - r.top) / r.height) * view[3]];
  }

  function zoom(factor, at) {
    var w = Math.min(home[2], Math.max(home[2] / 64, view[2] / factor));
    var h = (w / view[2]) * view[3];
    var x = at[0] - ((at[0] - view[0]) * w) / view[2];
    var y = at[1] - ((at[1] - view[1]) * h) / view[3];
    x = Math.min(Math.max(x, home[0]), home[0] + home[2] - w);
    y = Math.min(Math.max(y, home[1]), home[1] + home[3] - h);
    show([x, y, w, h]);
  }

  plot.addEventListener("wheel", function (event) {
    event.preventDefault();
    zoom(event.deltaY < 0 ? 1.25 : 0.8, svgPoint(event));
  }, { passive: false });

  var drag = null;
  plot.addEventListener("pointerdown", function (event) {
    drag = { at: svgPoint(event), view: view.slice() };
  });
  window.addEventListener("pointerup", function () { drag = null; });
  plot.addEventListener("pointermove", function (event) {
    if (!drag || view[2] >= home[2]) return;
    var r = plot.getBoundingClientRect();
    var dx = ((event.clientX - r.left) / r.width) * drag.view[2] + drag.view[0] - drag.at[0];
    var dy = ((event.clientY - r.top) / r.height) * drag.view[3] + drag.view[1] - drag.at[1];
    var x = Math.min(Math.max(drag.view[0] - dx, home[0]), home[0] + home[2] - view[2]);
    var y = Math.min(Math.max(drag.view[1] - dy, home[1]), home[1] + home[3] - view[3]);
    show([x, y, view[2], view[3]]);
  });
  plot.addEventListener("dblclick", function () { show(home.slice()); });
  document.getElementById("aiscan-reset").addEventListener("click", function () {
    show(home.slice());
  });

  // The script's tooltip replaces the browser's: the <title>s stay in the file for readers
  // without scripts, and are moved aside here so that two tooltips never show at once.
  var circles = plot.querySelectorAll("#hover circle");
  circles.forEach(function (circle) {
    var title = circle.querySelector("title");
    if (title) circle.removeChild(title);
    circle.addEventListener("pointerenter", function (event) {
      tip.textContent = circle.getAttribute("data-tip");
      tip.hidden = false;
      place(event);
    });
    circle.addEventListener("pointermove", place);
    circle.addEventListener("pointerleave", function () { tip.hidden = true; });
  });

  function place(event) {
    var x = event.clientX + 14, y = event.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth) x = Math.max(0, event.clientX - w - 14);
    if (y + h > window.innerHeight) y = Math.max(0, event.clientY - h - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  // Toggles: a device hides everything drawn for it, a memory level its ceilings and the
  // points placed at it. `tags` maps the figure's group ids to [device, level].
  var tagged = [];
  Object.keys(tags).forEach(function (id) {
    // several artists may share a gid (a path's size notes): every group with the id
    document.querySelectorAll('[id="' + CSS.escape(id) + '"]').forEach(function (node) {
      tagged.push([node, tags[id][0], tags[id][1]]);
    });
  });
  circles.forEach(function (circle) {
    tagged.push([circle, circle.getAttribute("data-device"), circle.getAttribute("data-level")]);
  });

  function refresh() {
    var off = { device: {}, level: {} };
    document.querySelectorAll("input[data-toggle]").forEach(function (box) {
      if (!box.checked) off[box.getAttribute("data-toggle")][box.value] = true;
    });
    tagged.forEach(function (item) {
      var hidden = off.device[item[1]] || (item[2] !== "" && off.level[item[2]]);
      item[0].style.display = hidden ? "none" : "";
    });
    tip.hidden = true;
  }
  document.querySelectorAll("input[data-toggle]").forEach(function (box) {
    box.addEventListener("change", refresh);
  });
  document.getElementById("aiscan-controls").hidden = false;
})();
