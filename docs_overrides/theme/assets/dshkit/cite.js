/* dshkit specification site: the "cite" button next to every requirement id copies the
   citation ("dshkit spec 0.1.0, SES-SURF-004 (URL)") to the clipboard. No network. */
(function () {
  "use strict";

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand("copy");
    } finally {
      document.body.removeChild(area);
    }
    return Promise.resolve();
  }

  function wire(root) {
    var buttons = root.querySelectorAll("button.dshkit-req-cite");
    for (var i = 0; i < buttons.length; i++) {
      var button = buttons[i];
      if (button.dataset.wired) continue;
      button.dataset.wired = "1";
      button.hidden = false;
      button.addEventListener("click", function (event) {
        var target = event.currentTarget;
        copy(target.dataset.cite).then(function () {
          target.setAttribute("data-copied", "");
          target.textContent = "copied";
          setTimeout(function () {
            target.removeAttribute("data-copied");
            target.textContent = "cite";
          }, 1500);
        });
      });
    }
  }

  /* Material's instant navigation swaps the page without a load event. */
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { wire(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  }
})();
