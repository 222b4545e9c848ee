"use strict";
// Pairing: ask for a code, show it, and wait (a long poll) until the desk confirms it; the
// answer sets the page's cookie, and the page reloads as the remote.
const $ = (id) => document.getElementById(id);

async function start() {
  $("pair-start").disabled = true;
  $("pair-status").textContent = "Asking…";
  let answer;
  try {
    const response = await fetch("/pair/start", { method: "POST", credentials: "same-origin" });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
  } catch (error) {
    $("pair-status").textContent = "Could not ask: " + error.message;
    $("pair-start").disabled = false;
    return;
  }
  for (const id of ["pair-code-line", "pair-code", "pair-command"]) $(id).hidden = false;
  $("pair-code").textContent = answer.code;
  $("pair-code-copy").textContent = answer.code;
  $("pair-code-copy2").textContent = answer.code;
  $("pair-start").hidden = true;
  $("pair-status").textContent = "Waiting for the desk…";
  wait();
}

async function wait() {
  for (;;) {
    let response, answer;
    try {
      response = await fetch("/pair/wait", { method: "POST", credentials: "same-origin" });
      answer = await response.json();
    } catch (error) {
      $("pair-status").textContent = "The service does not answer; trying again…";
      await new Promise((resolve) => setTimeout(resolve, 2000));
      continue;
    }
    if (answer.paired) {
      $("pair-status").textContent = "Paired.";
      location.reload();
      return;
    }
    if (!response.ok) {
      $("pair-status").textContent = (answer.error || response.statusText) + ".";
      $("pair-start").hidden = false;
      $("pair-start").disabled = false;
      $("pair-start").textContent = "Ask again";
      for (const id of ["pair-code-line", "pair-code", "pair-command"]) $(id).hidden = true;
      return;
    }
  }
}

$("pair-start").addEventListener("click", start);
