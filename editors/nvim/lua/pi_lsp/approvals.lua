--- pi_lsp.approvals: `window/showMessageRequest` (pi-lsp's approvals, design.md section 8)
--- answered through `vim.ui.select`, never `inputlist`, so UI plugins and headless stubs work.
---
--- Neovim 0.10+ runs server requests in a coroutine: the handler yields until the user picks.
--- Neovim 0.7 needs the answer before the handler returns: the handler calls `vim.ui.select` and
--- waits (`vim.wait`, at most `approval_timeout_ms`) for its callback. The stock `vim.ui.select`
--- answers at once; a select that needs typed keys cannot get them during that wait on 0.7, and
--- the server then applies its `pi.approvals.fallback` to the missing answer.
local config = require('pi_lsp.config')

local M = {}

local function prompt_of(params)
  local message = type(params.message) == 'string' and params.message or ''
  return 'pi-lsp: ' .. message
end

--- The handler: returns the chosen `MessageActionItem`, or `vim.NIL` (no choice).
function M.show_message_request(_, params, _)
  if type(params) ~= 'table' then
    return vim.NIL
  end
  local actions = type(params.actions) == 'table' and params.actions or {}
  local transcript = require('pi_lsp.transcript')
  transcript.note('approval asked: ' .. tostring(params.message))
  if #actions == 0 then
    vim.notify(prompt_of(params), vim.log.levels.WARN)
    return vim.NIL
  end
  local opts = {
    prompt = prompt_of(params),
    format_item = function(item)
      return type(item) == 'table' and tostring(item.title) or tostring(item)
    end,
    kind = 'pi_lsp_approval',
  }
  local function record(choice)
    transcript.note('approval answered: ' .. (choice and tostring(choice.title) or '(no answer)'))
    return choice or vim.NIL
  end

  local co, is_main = coroutine.running()
  if co and not is_main then
    vim.ui.select(actions, opts, function(choice)
      -- resume later: a synchronous select calls back before the yield below
      vim.schedule(function()
        coroutine.resume(co, choice)
      end)
    end)
    return record(coroutine.yield())
  end

  local answered, answer = false, nil
  vim.ui.select(actions, opts, function(choice)
    answered, answer = true, choice
  end)
  if not answered then
    vim.wait(config.get().approval_timeout_ms, function()
      return answered
    end, 20)
  end
  return record(answer)
end

return M
