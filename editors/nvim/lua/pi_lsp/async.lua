--- pi_lsp.async: answering a server request that must wait (for other language servers, for a
--- buffer's clients to attach) without blocking Neovim longer than a bound.
---
--- Neovim 0.10+ runs server-request handlers inside a coroutine (vim/lsp/rpc.lua) and sends the
--- handler's return value when that coroutine finishes, so `M.await` simply yields it and the
--- editor stays responsive. Neovim 0.7 calls handlers on the main loop and needs the answer when
--- the handler returns: there the work runs in a coroutine of ours while the handler waits in
--- `vim.wait` (which keeps processing LSP messages and timers) for at most the sum of the waits'
--- own bounds. Every `M.await` is bounded by its own timeout.
local M = {}

local uv = vim.uv or vim.loop

--- Run `fn()` for a handler and return what it returns. `bound_ms`: the most the 0.7 path waits
--- (the sum of `fn`'s own bounds plus slack); past it, returns `nil, timeout_error`. On the 0.7
--- path an error raised by `fn` (before or after a wait) is raised again here, so Neovim answers
--- the request with InternalError as it does for any handler error.
function M.handle(fn, bound_ms, timeout_error)
  local co, is_main = coroutine.running()
  if co and not is_main and vim.fn.has('nvim-0.10') == 1 then
    return fn() -- Neovim's own handler coroutine: `M.await` yields it
  end
  local outcome = nil
  local task = coroutine.create(function()
    outcome = { pcall(fn) }
  end)
  local ok, err = coroutine.resume(task)
  if not ok then
    error(err, 0)
  end
  if not outcome then
    vim.wait(bound_ms, function()
      return outcome ~= nil
    end, 10)
  end
  if not outcome then
    return nil, timeout_error
  end
  if not outcome[1] then
    error(outcome[2], 0)
  end
  return unpack(outcome, 2, table.maxn(outcome))
end

--- Inside `M.handle`: call `start(resume)` and wait until `resume(...)` is called or `timeout_ms`
--- passes. Returns resume's arguments, or `nil, 'timeout'`. `resume` may be called from any
--- context (fast event callbacks included) and only its first call counts.
function M.await(start, timeout_ms)
  local co = assert(coroutine.running(), 'pi_lsp.async.await outside a coroutine')
  local finished, timer = false, uv.new_timer()
  local function resume(...)
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    local args = { n = select('#', ...), ... }
    vim.schedule(function()
      local ok, err = coroutine.resume(co, unpack(args, 1, args.n))
      if not ok then
        vim.notify('pi_lsp: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end)
  end
  timer:start(timeout_ms, 0, function()
    resume(nil, 'timeout')
  end)
  local ok, err = pcall(start, resume)
  if not ok then
    finished = true -- nothing may resume this coroutine later
    timer:stop()
    timer:close()
    error(err, 0)
  end
  return coroutine.yield()
end

--- Inside `M.handle`: wait until `predicate()` (run on the main loop every `interval_ms`) is true
--- or `timeout_ms` passes. Returns whether it became true.
function M.wait_until(predicate, timeout_ms, interval_ms)
  if predicate() then
    return true
  end
  local poll = uv.new_timer()
  local ok = M.await(function(resume)
    poll:start(interval_ms or 20, interval_ms or 20, vim.schedule_wrap(function()
      if not poll:is_closing() and predicate() then
        resume(true)
      end
    end))
  end, timeout_ms)
  poll:stop()
  if not poll:is_closing() then
    poll:close()
  end
  return ok == true
end

return M
