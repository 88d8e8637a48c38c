--- pi_lsp.scratch: the plugin's named read-only scratch buffers (transcript, log, changes).
local M = {}

local api = vim.api
local bufs = {}

--- The buffer named `name` (created when missing, wiped or deleted): not a file, hidden rather than
--- unloaded when its window closes, no swap file, `filetype`, not modifiable (writers toggle
--- 'modifiable' around their changes). Returns `buf, created` (`created` is true for a new one,
--- so the caller sets its keys and autocmds once).
function M.named(name, filetype)
  local b = bufs[name]
  if b and api.nvim_buf_is_valid(b) then
    if api.nvim_buf_is_loaded(b) then
      return b, false
    end
    -- `:bdelete`d: its lines, marks, buffer-local options and keys are gone; start afresh
    api.nvim_buf_delete(b, { force = true })
  end
  b = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(b, name)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = filetype
  vim.bo[b].modifiable = false
  bufs[name] = b
  return b, true
end

return M
