-- Issue 20: an MCP client's `edit` (pi-lsp mcp, relayed to this editor's daemon) lands in the open
-- dirty buffer next to the user's unsaved text, as one undo step. The user types, then the scenario
-- writes $PI_TEST_READY; tests/editors/test_nvim_mcp.py runs the MCP client, and writes
-- $PI_TEST_DONE once the client has its result (so the daemon is not stopped before it replies).
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

local USER = 'user typed this'
local AGENT = 'agent wrote this'

H.run(function()
  require('pi_lsp').setup({ settings = { maxRetries = 0, edit = { verifyTimeoutSeconds = 5 } } })
  vim.cmd('edit dirty.txt')
  local buf = api.nvim_get_current_buf()
  H.check('client started', H.client() ~= nil)

  vim.cmd('normal! O' .. USER) -- the user types a line above "alpha" and does not save
  H.check('the user made the buffer dirty', vim.bo[buf].modified)
  local ready = assert(io.open(vim.env.PI_TEST_READY, 'wb'))
  ready:write('ready')
  ready:close()

  local landed = H.wait(20000, function() return H.text(buf):find(AGENT, 1, true) ~= nil end)
  H.check('the agent edit reached the buffer', landed, H.text(buf))
  H.check('the MCP client got its result', H.wait(20000, function() return H.read(vim.env.PI_TEST_DONE) ~= nil end))

  H.check('the buffer holds both texts', H.text(buf) == USER .. '\nalpha\n' .. AGENT .. '\n', H.text(buf))
  H.check('it is still modified', vim.bo[buf].modified)
  H.check('the file on disk is unchanged', H.read('dirty.txt') == 'alpha\nbeta\n', H.read('dirty.txt'))

  vim.cmd('undo')
  H.check('one undo removes only the agent edit', H.text(buf) == USER .. '\nalpha\nbeta\n', H.text(buf))
  vim.cmd('undo')
  H.check('the next undo removes the user text', H.text(buf) == 'alpha\nbeta\n', H.text(buf))
end)
