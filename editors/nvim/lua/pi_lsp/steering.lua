--- pi_lsp.steering: a prompt written while the agent runs (issue 19). The user picks how it goes:
---
--- - steer: `pi/steer {sessionId, text}`, a user message sent with the run's next model request
---   (after the running tool calls end);
--- - queue: `pi/followUp {sessionId, text}`, a user message that continues the run when it would end;
--- - stop: `pi/abort` (the text is kept, as with cancel);
--- - cancel: nothing is sent; the text stays where it was written (the prompt buffer, or the
---   command-line history for `:Pi {text}`).
---
--- The choice is asked with `vim.ui.select` (so a UI plugin the user has installed shows it).
--- A steering or queued message is shown in the transcript as the user's message, marked
--- `[steering]` / `[queued]`. Texts the run ended before sending (the reply's `undelivered`) come
--- back into the prompt buffer and the transcript says so (`pi_lsp.run`).
local M = {}

--- The choices, in the order shown: `{how, label}`.
M.CHOICES = {
  { how = 'steer', label = "Steer: send it with the agent's next model request" },
  { how = 'queue', label = 'Queue: run it when the current run ends' },
  { how = 'stop', label = 'Stop the agent (your text is kept)' },
  { how = 'cancel', label = 'Cancel (your text is kept)' },
}

M.PROMPT = 'pi-lsp: the agent is running. Send this prompt how?'

local METHODS = { steer = 'pi/steer', queue = 'pi/followUp' }

--- Send `text` (with `selection`, see `pi_lsp.run.compose`) to the active run as `how`
--- (`'steer'` or `'queue'`). `on_sent()` runs once the server queued it (or, when the run ended
--- meanwhile, once the text started a new run instead). Returns false and the reason when
--- nothing could be sent (no run, no session yet); the text is then left where it was.
function M.send(how, text, selection, on_sent)
  local run = require('pi_lsp.run')
  local transcript = require('pi_lsp.transcript')
  local active = run.running
  if not active then
    -- the run is over: a steering or queued message is simply the next prompt
    local ok, why = run.prompt(text, selection)
    if ok and on_sent then
      on_sent()
    end
    return ok, why
  end
  local client = vim.lsp.get_client_by_id(active.client_id)
  local session_id = run.session_id or active.session_id
  if not client or not session_id then
    local message = 'pi_lsp: the run has not started yet; your text is kept, try again in a moment'
    vim.notify(message, vim.log.levels.WARN)
    return false, message
  end
  local params = { sessionId = session_id, text = run.compose(text, selection) }
  require('pi_lsp.client').request(client, METHODS[how], params, function(err)
    if not err then
      transcript.queued(text, how)
      if on_sent then
        on_sent()
      end
    elseif not run.running then
      M.send(how, text, selection, on_sent) -- the run ended meanwhile: start a new one
    else
      local message = 'pi-lsp: ' .. tostring(err.message or err) .. ' (your text is kept)'
      transcript.error(message)
      vim.notify(message, vim.log.levels.ERROR)
    end
  end)
  return true
end

--- Ask how to send `text` while a run is active (see the module docstring), then do it.
--- `on_sent()` runs when the text was sent (steer, queue), so the caller can clear its draft.
function M.ask(text, selection, on_sent)
  vim.ui.select(M.CHOICES, {
    prompt = M.PROMPT,
    format_item = function(choice)
      return choice.label
    end,
  }, function(choice)
    local how = choice and choice.how or 'cancel'
    if how == 'steer' or how == 'queue' then
      M.send(how, text, selection, on_sent)
    elseif how == 'stop' then
      require('pi_lsp.run').abort()
    else
      vim.notify('pi_lsp: nothing sent; your text is kept', vim.log.levels.INFO)
    end
  end)
end

return M
