-- pi/documentState: `:set modified` changes no text, only Neovim's flag; BufModifiedSet tells
-- pi-lsp the buffer is dirty, so the agent's edit is applied but not saved
-- (replay session nvim_state.jsonl).
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

local function round_trip(client)
  local done = false
  require('pi_lsp.client').request(client, 'pi/listTools', vim.empty_dict(), function() done = true end)
  return H.wait(10000, function() return done end)
end

H.run(function()
  require('pi_lsp').setup({
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, edit = { verifyTimeoutSeconds = 5 } },
  })
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  local client = H.client()
  H.check('client started', client ~= nil and round_trip(client))

  vim.cmd('set modified')
  H.wait(50, function() return false end) -- let the scheduled pi/documentState go out
  H.check('server reached', round_trip(client))

  vim.cmd('Pi change the greeting')
  H.check('the run ended', H.wait_run(30000))
  H.check('the buffer got the edit', H.text(greet):find('return "hey"', 1, true) ~= nil, H.text(greet))
  H.check('the buffer the user marked modified was not saved', H.read('greet.py'):find('return "hi"', 1, true) ~= nil,
    H.read('greet.py'))
  H.check('it is still modified', vim.bo[greet].modified)
  H.check('no save in the transcript', not H.transcript_has('saved greet.py'))
end)
