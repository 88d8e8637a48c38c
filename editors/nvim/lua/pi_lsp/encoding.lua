--- pi_lsp.encoding: LSP position columns between the position encodings ('utf-8', 'utf-16',
--- 'utf-32'; LSP 3.17 `PositionEncodingKind`), and the text of a document's lines to do it with.
---
--- pi-lsp and each language server may have negotiated different encodings with Neovim
--- (`client.offset_encoding`), so every position relayed between them is converted here (issue 17
--- wire contract). Pure Lua over the line's UTF-8 bytes, the same on every Neovim version.
--- Columns are 0-based; units: bytes (utf-8), UTF-16 code units (utf-16), code points (utf-32).
--- A column inside a character (e.g. between the halves of a surrogate pair) resolves to the
--- start of that character; a column past the end of the line keeps its excess unchanged (LSP:
--- such a column means the end of the line, so the excess carries no meaning).
local M = {}

local api = vim.api

--- The byte length of the UTF-8 sequence starting with byte `c` (1 for a stray continuation byte).
local function seq_len(c)
  if c >= 0xF0 then
    return 4
  elseif c >= 0xE0 then
    return 3
  elseif c >= 0xC0 then
    return 2
  end
  return 1
end

--- The units one character of `len` UTF-8 bytes takes in `encoding`.
local function width(len, encoding)
  if encoding == 'utf-8' then
    return len
  elseif encoding == 'utf-16' then
    return len == 4 and 2 or 1
  end
  return 1
end

--- The byte offset (0-based) of column `col` (in `encoding` units) of `line`.
function M.to_byte(line, col, encoding)
  if encoding == 'utf-8' then
    return col
  end
  local i, units, n = 1, 0, #line
  while i <= n do
    local len = math.min(seq_len(line:byte(i)), n - i + 1)
    local w = width(len, encoding)
    if units + w > col then
      return i - 1
    end
    units = units + w
    i = i + len
  end
  return n + (col - units)
end

--- The column (in `encoding` units) of byte offset `byte` (0-based) of `line`.
function M.from_byte(line, byte, encoding)
  if encoding == 'utf-8' then
    return byte
  end
  local i, units, n = 1, 0, #line
  while i <= n and i - 1 < byte do
    local len = math.min(seq_len(line:byte(i)), n - i + 1)
    if i - 1 + len > byte then
      return units -- inside a character: its start
    end
    units = units + width(len, encoding)
    i = i + len
  end
  return units + math.max(0, byte - n)
end

--- Column `col` of `line` from encoding `from` to encoding `to`.
function M.convert(line, col, from, to)
  if from == to or type(col) ~= 'number' then
    return col
  end
  return M.from_byte(line, M.to_byte(line, col, from), to)
end

--- A line source for one conversion pass: `lines(uri, row)` -> the text of 0-based line `row` of
--- the document `uri`, from its loaded buffer (unsaved text included) or else its file on disk
--- (read once per pass), '' when there is no such line or file.
function M.line_source()
  local files = {}
  return function(uri, row)
    local buf = require('pi_lsp.documents').find_buf(uri)
    if buf then
      return api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    end
    if files[uri] == nil then
      local ok, fname = pcall(vim.uri_to_fname, uri)
      local readable = ok and vim.fn.filereadable(fname) == 1
      files[uri] = readable and vim.fn.readfile(fname) or false
    end
    return files[uri] and files[uri][row + 1] or ''
  end
end

--- Convert LSP `Position` `pos` of document `uri` in place from `from` to `to` (`lines` from
--- `M.line_source`).
function M.position(pos, uri, from, to, lines)
  if type(pos) == 'table' and type(pos.line) == 'number' and type(pos.character) == 'number' then
    pos.character = M.convert(lines(uri, pos.line), pos.character, from, to)
  end
end

--- Convert LSP `Range` `range` of document `uri` in place.
function M.range(range, uri, from, to, lines)
  if type(range) == 'table' then
    M.position(range.start, uri, from, to, lines)
    M.position(range['end'], uri, from, to, lines)
  end
end

return M
