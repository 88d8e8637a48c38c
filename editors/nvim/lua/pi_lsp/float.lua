--- pi_lsp.float: the centred, bordered float the approval prompt and the edit review show in.
local M = {}

local api = vim.api

--- A scratch buffer for a float: not listed, wiped when hidden, with `filetype`.
function M.scratch(filetype)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = filetype
  return buf
end

--- Show `buf` in a float centred in the editor and sized to `lines`: as wide as the widest line
--- (display cells, + 1) but at least `min_width`, as high as the lines, both within the screen
--- (4 cells margin). Above other floats (zindex 200); the cursor stays where it was. Returns the
--- window id.
function M.open_centered(buf, lines, min_width)
  local width = min_width
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 1)
  end
  width = math.min(width, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(1, vim.o.lines - 4))
  return api.nvim_open_win(buf, false, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    zindex = 200,
  })
end

return M
