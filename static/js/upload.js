// The upload's page while its import runs: ask for its state every second, and show the
// result (reload the page) once the state is no longer queued or running.
(function () {
  "use strict";
  const status = document.getElementById("upload-state");
  if (!status) {
    return;
  }
  const working = ["queued", "running"];
  const poll = () => {
    fetch(status.dataset.url, { headers: { Accept: "application/json" } })
      .then((answer) => (answer.ok ? answer.json() : Promise.reject(answer.status)))
      .then((state) => {
        if (!working.includes(state.state)) {
          window.location.reload();
          return;
        }
        status.textContent = `Import ${state.label}… this page follows it.`;
        window.setTimeout(poll, 1000);
      })
      .catch((problem) => {
        status.textContent = `The import's state could not be read (${problem}); asking again in 5 s.`;
        window.setTimeout(poll, 5000);
      });
  };
  window.setTimeout(poll, 1000);
})();
