--- pi_lsp.run: one agent run at a time, from :Pi to its end (design.md sections 5 and 6).
---
--- `pi/prompt {text, sessionId?}` answers `{sessionId, stopReason, errorMessage?, undelivered?}`
--- when the run ends; the events stream meanwhile as `pi/event` into the transcript. Later prompts
--- continue the same session. A prompt while one runs is not a second run (the server would answer
--- RequestFailed): `:Pi`/the prompt buffer ask to steer or queue it (`pi_lsp.steering`). Texts the
--- run ended before sending (`undelivered`) go back into the prompt buffer. If the server exits
--- mid-run the transcript says so, the run is over, the buffers keep what was applied, and the
--- next :Pi starts a new server.
local client_mod = require('pi_lsp.client')
local transcript = require('pi_lsp.transcript')

local M = {}

--- `{client_id, text, session_id?}` while a run is active, else nil (`session_id` from its first
--- `pi/event`, so a steering message can name the session before the first reply).
M.running = nil
--- The session the next prompt continues (from the last `pi/prompt` reply).
M.session_id = nil
--- The last `pi/prompt` reply or `{error = message}` (for scripts and tests).
M.last_reply = nil

local function fail(message)
  transcript.error(message)
  vim.notify(message, vim.log.levels.ERROR)
end

--- The prompt text with a selection as context: `selection` is `{path, first, last, lines}`
--- (1-based, inclusive line numbers) or nil.
function M.compose(text, selection)
  if not selection then
    return text
  end
  return string.format(
    '%s\n\nSelected lines %d-%d of %s:\n```\n%s\n```',
    text, selection.first, selection.last, selection.path, table.concat(selection.lines, '\n')
  )
end

--- Start a run. Returns true when the prompt was sent, else false and the reason.
function M.prompt(text, selection)
  if type(text) ~= 'string' or vim.trim(text) == '' then
    local message = 'pi_lsp: :Pi needs a prompt, e.g. :Pi fix the failing test'
    vim.notify(message, vim.log.levels.WARN)
    return false, message
  end
  if M.running then
    local message = 'pi_lsp: a prompt is already running; steer or queue it (:PiSteer, :PiQueue) or stop it with :PiAbort'
    transcript.error(message)
    vim.notify(message, vim.log.levels.WARN)
    return false, message
  end
  local client, problem, notice = client_mod.current()
  if not client then
    transcript.open()
    fail(problem)
    return false, problem
  end
  transcript.open()
  transcript.prompt(text)
  if notice then -- a file outside every workspace: say where the prompt went
    transcript.note(notice)
    vim.notify(notice, vim.log.levels.WARN)
  end
  transcript.run_ended = false
  local run = { client_id = client.id, text = text }
  M.running = run
  pcall(vim.cmd, 'redrawstatus!')
  local params = { text = M.compose(text, selection) }
  if M.session_id then
    params.sessionId = M.session_id
  end
  local sent = client_mod.request(client, 'pi/prompt', params, function(err, result)
    if M.running ~= run then
      return -- already ended (the server exited)
    end
    M.running = nil
    pcall(vim.cmd, 'redrawstatus!') -- statuslines showing require('pi_lsp').status()
    if err then
      M.last_reply = { error = err.message or tostring(err) }
      fail('pi-lsp: ' .. tostring(err.message or err))
      return
    end
    M.last_reply = result
    if type(result) == 'table' then
      M.session_id = result.sessionId or M.session_id
      -- a run that ended with agent_end showed its error (or `— aborted —`) there; a refused
      -- prompt (no model configured, ...) sends no events, so its reason is shown here
      local shown = (result.stopReason == 'error' or result.stopReason == 'aborted') and transcript.run_ended
      if result.errorMessage and result.errorMessage ~= vim.NIL and not shown then
        transcript.error(tostring(result.errorMessage))
      end
      M.give_back(result.undelivered)
      require('pi_lsp.changes').count_files(M.session_id, function(count)
        if count > 0 then
          transcript.changes_link(count)
        end
      end)
    end
  end)
  if sent == false then
    M.running = nil
    fail('pi_lsp: the prompt could not be sent (the server is not running)')
    return false, 'not sent'
  end
  return true
end

--- The texts of steering/follow-up messages the run ended before sending: shown in the
--- transcript and put back into the prompt buffer, so nothing typed is lost. `texts`: a list of
--- strings, or nil / vim.NIL.
function M.give_back(texts)
  if type(texts) ~= 'table' or #texts == 0 then
    return
  end
  for _, text in ipairs(texts) do
    transcript.error('not sent (the run ended first), back in the prompt buffer: ' .. tostring(text))
  end
  require('pi_lsp.prompt_buffer').give_back(texts)
  vim.notify(string.format('pi_lsp: %d message(s) were not sent; they are back in the prompt buffer (:Pi)', #texts),
    vim.log.levels.WARN)
end

--- The `pi/event` handler: remembers the active run's session, then the transcript shows it.
function M.on_event(err, params, ctx)
  if M.running and type(params) == 'table' and type(params.sessionId) == 'string' and params.sessionId ~= 'external' then
    M.running.session_id = M.running.session_id or params.sessionId
  end
  return transcript.on_event(err, params, ctx)
end

--- :PiAbort: ask the server to stop the active run (`pi/abort`).
function M.abort()
  if not M.running then
    vim.notify('pi_lsp: no prompt is running', vim.log.levels.INFO)
    return false
  end
  local client = vim.lsp.get_client_by_id(M.running.client_id)
  if client then
    client_mod.notify(client, 'pi/abort', M.session_id and { sessionId = M.session_id } or vim.empty_dict())
    transcript.note('abort requested')
  end
  return true
end

--- Exit listener (registered by setup): a run on that client is over.
function M.on_client_exit(code, signal, client_id)
  local how = string.format('code %s, signal %s', tostring(code), tostring(signal))
  transcript.log('pi-lsp exited (' .. how .. ')')
  require('pi_lsp.approvals').server_gone()
  require('pi_lsp.review').server_gone()
  if M.running and M.running.client_id == client_id then
    M.running = nil
    M.last_reply = { error = 'server exited' }
    fail(string.format(
      'pi-lsp exited during the run (%s). The buffers keep the edits applied so far; :Pi starts it again.', how
    ))
  end
end

--- :PiTools: without names, list the tools (active ones marked `*`); with names, make exactly
--- those active (`pi/setActiveTools`). `done(lines)` gets the message lines (optional).
function M.tools(names, done)
  local client, problem = client_mod.current()
  if not client then
    vim.notify(problem, vim.log.levels.ERROR)
    return false
  end
  local function show(lines)
    vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
    if done then
      done(lines)
    end
  end
  if names and #names > 0 then
    client_mod.request(client, 'pi/setActiveTools', { names = names }, function(err, result)
      if err then
        show({ 'pi-lsp: ' .. tostring(err.message or err) })
      else
        show({ 'pi-lsp active tools: ' .. table.concat(result.active or {}, ' ') })
      end
    end)
    return true
  end
  client_mod.request(client, 'pi/listTools', vim.empty_dict(), function(err, result)
    if err then
      show({ 'pi-lsp: ' .. tostring(err.message or err) })
      return
    end
    local lines = { 'pi-lsp tools (* = active):' }
    for _, tool in ipairs(result.tools or {}) do
      table.insert(lines, string.format('%s %s', tool.active and '*' or ' ', tool.name))
    end
    show(lines)
  end)
  return true
end

return M
