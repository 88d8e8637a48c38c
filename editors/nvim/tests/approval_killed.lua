-- Neovim is killed (SIGTERM, as when its terminal goes away) while the approval prompt waits
-- (replay session nvim_approval_killed.jsonl). The prompt's wait holds the scenario, so the
-- checks are made and written from the prompt's own loop, just before Neovim signals itself.
-- Neovim 0.7 runs the server's last events while it goes down; an error they raise in the
-- transcript does not reach v:errmsg or stderr reliably then, so each transcript function is
-- watched: an error it raises (then raised on unchanged) is appended to $PI_TEST_RESULT.errors.
local H = dofile(vim.env.PI_TEST_HELPERS)

local transcript = require('pi_lsp.transcript')
for name, fn in pairs(transcript) do
  if type(fn) == 'function' then
    transcript[name] = function(...)
      local result = { pcall(fn, ...) }
      if not result[1] then
        local f = assert(io.open(vim.env.PI_TEST_RESULT .. '.errors', 'ab'))
        f:write(string.format('transcript.%s (v:exiting %s): %s\n', name, tostring(vim.v.exiting), tostring(result[2])))
        f:close()
        error(result[2], 0)
      end
      return unpack(result, 2, table.maxn(result))
    end
  end
end

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 60 } },
  })
  H.approver(function(record)
    H.check('the prompt came up for the bash call', table.concat(record.lines, '\n'):find('touch killed.txt', 1, true), record.lines)
    H.check('the transcript shows the waiting call', H.transcript_row('⏳ bash touch killed.txt'))
    H.write_result()
    H.uv.kill(vim.fn.getpid(), 'sigterm')
    return nil -- the user never answers
  end)
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi touch a file')
  H.wait(30000, function() return false end)
  H.check('Neovim was gone within 30 s of the prompt', false)
end)
