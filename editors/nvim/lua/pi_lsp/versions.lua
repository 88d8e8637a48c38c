--- pi_lsp.versions: the document version Neovim's LSP client last sent for a buffer, from public
--- APIs only (issue 15: `vim.lsp.util.buf_versions` is private since 0.11).
---
--- Neovim sends `didOpen` with version 0 and each `didChange` with the buffer's `b:changedtick` at
--- that change (0.7 to 0.11 alike). This module keeps the same number by listening to the same
--- `nvim_buf_attach` `on_lines` events: 0 when the buffer is tracked, reset to 0 when Neovim
--- reopens the document (the client's initialization, `on_reload`), `changedtick` on each change.
--- A `:write` bumps `b:changedtick` without a `didChange`, which is why the tick itself is not it.
local M = {}

local api = vim.api

--- version by buffer number, for tracked buffers
local versions = {}

--- Start tracking `bufnr` (idempotent). Call when the buffer is attached to a pi-lsp client.
function M.track(bufnr)
  if versions[bufnr] ~= nil or not api.nvim_buf_is_loaded(bufnr) then
    return
  end
  versions[bufnr] = 0
  api.nvim_buf_attach(bufnr, false, {
    on_lines = function(_, b, changedtick)
      if versions[b] == nil then
        return true -- untracked: detach
      end
      versions[b] = changedtick
    end,
    on_reload = function(_, b)
      if versions[b] ~= nil then
        versions[b] = 0
      end
    end,
    on_detach = function(_, b)
      versions[b] = nil
    end,
  })
end

--- The client (re)sends `didOpen` (version 0) for its attached buffers: reset them to 0.
function M.reopened(bufnrs)
  for _, b in ipairs(bufnrs) do
    if versions[b] ~= nil then
      versions[b] = 0
    end
  end
end

--- Stop tracking `bufnr` (the listener detaches at its next event).
function M.forget(bufnr)
  versions[bufnr] = nil
end

--- The version of `bufnr` as last sent, or nil when it is not tracked.
function M.get(bufnr)
  return versions[bufnr]
end

return M
