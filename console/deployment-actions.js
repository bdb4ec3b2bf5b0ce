// Pause, resume and roll back a staged deployment from its card: each asks for a
// confirmation and a change message (the transition's reason, in the record and in
// `discfg log`), then posts the transition with `after=` the number of transitions the
// card showed, so it is recorded only if nobody moved the deployment meanwhile (the
// store's compare-and-swap). A deployment moved meanwhile is one clear message and a read
// again; any other refusal (a read token's 403, a state that no longer allows it) is the
// API's own words.

import { api, configUrl, isAbort } from './api.js?v={{version}}';
import { changeMessageHeaders, changeMessageProblem } from './change-message.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { ACTIONS, percent } from './deployment-card.js?v={{version}}';
import { readDeployments, shownDeployment } from './deployments.js?v={{version}}';

/** The transition asked for and awaiting its confirmation: { session, id, action, after }, or null. */
let asked = null;

/** What each transition does, said before it is confirmed. */
const CONSEQUENCES = {
  pause: 'The share stays where it is and the schedule waits until it is resumed.',
  resume: 'The schedule goes on from where it was paused, shifted by the time paused.',
  rollback: 'The candidate is taken back from its readers, those who got it last first, over the strategy\'s rollback time. This cannot be undone: a new deployment would be needed.',
};

/** A click in the panel: a transition's button asks for its confirmation and a change message. */
export function onDeploymentsClick(event) {
  const button = event.target.closest('button[data-deployment-action]');
  if (!button || !state.session) return;
  const { deploymentId: id, deploymentAction: action } = button.dataset;
  const shown = shownDeployment(id);
  if (!ACTIONS[action] || !shown) return;
  asked = { session: state.session, id, action, after: Number(button.dataset.after) };
  const status = shown.status || {};
  ui.deployConfirmText.textContent = `${ACTIONS[action].confirm} deployment ${id} of ${shown.prefix}, `
    + `${status.state} at ${percent(status.shareBasisPoints || 0)} %? ${CONSEQUENCES[action]}`;
  ui.deployConfirmYes.textContent = `${ACTIONS[action].confirm} deployment`;
  ui.deployConfirmYes.className = action === 'rollback' ? 'danger' : 'primary';
  ui.deployMessage.value = '';
  ui.deployConfirm.hidden = false;
  ui.deployConfirm.scrollIntoView({ block: 'nearest' });
  ui.deployMessage.focus();
}

export function hideDeployConfirm() {
  asked = null;
  ui.deployConfirm.hidden = true;
}

export function onDeployConfirmCancel() {
  const { id, action } = asked || {};
  hideDeployConfirm();
  const button = id && ui.deploymentsList.querySelector(
    `button[data-deployment-id="${CSS.escape(id)}"][data-deployment-action="${CSS.escape(action)}"]`);
  if (button) button.focus();
}

/** The confirmation: one POST of the transition, after= the transitions shown, the message as its reason. */
export async function onDeployConfirmed() {
  if (!asked || asked.session !== state.session || ui.deployConfirmYes.disabled) return;
  const { session: current, id, action, after } = asked;
  const messageProblem = changeMessageProblem(ui.deployMessage.value);
  if (messageProblem) {
    ui.deploymentsError.textContent = `Not changed: ${messageProblem}`;
    ui.deployMessage.focus();
    return;
  }
  ui.deployConfirmYes.disabled = true;
  try {
    const envelope = await api('POST', `${configUrl(current.name)}/deployments/${encodeURIComponent(id)}/${action}?after=${after}`, {
      headers: changeMessageHeaders(ui.deployMessage.value),
      signal: current.controller.signal,
    });
    if (current !== state.session) return;
    hideDeployConfirm();
    const now = envelope.deployment && envelope.deployment.status;
    flash(`Deployment ${id} is ${now ? `${now.state} at ${percent(now.shareBasisPoints || 0)} %` : 'changed'}, revision ${envelope.revision}`);
    // The watch brings the record's change too; reading now shows it without waiting for it.
    await readDeployments(current);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 412 || error.status === 404) {
      hideDeployConfirm();
      ui.deploymentsError.textContent = `Not changed: someone else moved deployment ${id} since it was shown. `
        + 'It has been read again: check its state and ask again if it is still needed.';
      await readDeployments(current);
    } else {
      showFailure(error, ui.deploymentsError); // a token that may not, a state that does not allow it: the API's words
    }
  } finally {
    ui.deployConfirmYes.disabled = false;
  }
}
