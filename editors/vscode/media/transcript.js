// The Pi view's page script (see src/transcriptView.ts for the messages). Runs under a
// Content-Security-Policy that allows only this file (by nonce): no inline handlers, no eval.
// Entries arrive as HTML fragments rendered and escaped by the extension; this script only
// places them (replacing an entry in place keeps its <details> open or closed), keeps the view
// scrolled to the end while the user is at the end, and sends the prompt box and the buttons.
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const transcript = document.getElementById('transcript');
  const form = document.getElementById('prompt-form');
  const prompt = document.getElementById('prompt');
  const abort = document.getElementById('abort');

  const atEnd = () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;

  function place(entry) {
    const holder = document.createElement('div');
    holder.innerHTML = entry.html;
    const element = holder.firstElementChild;
    if (!element) return;
    const old = transcript.querySelector(`[data-id="${CSS.escape(entry.id)}"]`);
    if (old) {
      const wasOpen = old.querySelector('details') && old.querySelector('details').open;
      if (wasOpen && element.querySelector('details')) element.querySelector('details').open = true;
      old.replaceWith(element);
    } else {
      const empty = transcript.querySelector('.empty');
      if (empty) empty.remove();
      transcript.appendChild(element);
    }
    const preferred = element.querySelector('button[data-default="true"]');
    if (preferred) preferred.focus();
  }

  function apply(entries) {
    const follow = atEnd();
    for (const entry of entries) place(entry);
    if (follow) window.scrollTo(0, document.body.scrollHeight);
  }

  const send = document.getElementById('send');
  const steer = document.getElementById('steer');
  const queue = document.getElementById('queue');
  const ask = document.getElementById('delivery');
  let running = false;

  // While a run is active a prompt is not a second run (issue 19): Send / Enter asks how to deliver
  // it (Steer: with the agent's next model request; Queue: when the run ends; Cancel: the text
  // stays in the box); the Steer / Queue buttons and Ctrl+Enter / Alt+Enter say it directly.
  function setRunning(value) {
    running = value;
    abort.hidden = !running;
    steer.hidden = !running;
    queue.hidden = !running;
    if (!running) ask.hidden = true;
    document.body.classList.toggle('running', running);
  }

  window.addEventListener('message', (event) => {
    const message = event.data;
    if (!message || typeof message !== 'object') return;
    if (message.type === 'reset') {
      transcript.querySelectorAll('[data-id]').forEach((e) => e.remove());
      apply(message.entries);
      setRunning(message.running);
    } else if (message.type === 'upsert') {
      apply(message.entries);
    } else if (message.type === 'state') {
      setRunning(message.running);
    } else if (message.type === 'restore' && typeof message.text === 'string') {
      prompt.value = prompt.value.trim() === '' ? message.text : `${prompt.value}\n\n${message.text}`;
    }
  });

  // delivery: 'prompt', 'steer' or 'followUp'; without one, a prompt during a run asks first.
  function submit(delivery) {
    const text = prompt.value;
    if (text.trim() === '') return;
    if (running && !delivery) {
      ask.hidden = false;
      ask.querySelector('button').focus();
      return;
    }
    ask.hidden = true;
    vscode.postMessage({ type: 'submit', text, delivery: delivery || 'prompt' });
    prompt.value = '';
  }

  form.addEventListener('submit', (event) => { event.preventDefault(); submit(); });
  prompt.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    submit(running && event.ctrlKey ? 'steer' : running && event.altKey ? 'followUp' : undefined);
  });
  steer.addEventListener('click', () => submit('steer'));
  queue.addEventListener('click', () => submit('followUp'));
  ask.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.dataset.delivery) {
      submit(button.dataset.delivery);
    } else {
      ask.hidden = true;
      prompt.focus();
    }
  });
  ask.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') { ask.hidden = true; prompt.focus(); }
  });
  abort.addEventListener('click', () => vscode.postMessage({ type: 'abort' }));

  transcript.addEventListener('click', (event) => {
    if (event.target.closest('button.review-changes')) {
      vscode.postMessage({ type: 'reviewChanges' });
      return;
    }
    const button = event.target.closest('button[data-approval]');
    if (!button) return;
    button.closest('.actions').querySelectorAll('button').forEach((b) => { b.disabled = true; });
    vscode.postMessage({ type: 'approval', approvalId: button.dataset.approval, action: button.dataset.action });
  });
  // Escape on a pending approval dismisses it, and dismissing is Deny.
  transcript.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    const card = event.target.closest('.approval.pending');
    if (!card) return;
    const approvalId = card.dataset.approvalId;
    card.querySelectorAll('button').forEach((b) => { b.disabled = true; });
    vscode.postMessage({ type: 'approval', approvalId, action: 'deny' });
  });

  vscode.postMessage({ type: 'ready' });
}());
