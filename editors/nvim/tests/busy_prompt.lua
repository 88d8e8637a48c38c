-- Bad input: a prompt while another runs. The plugin asks how to send it (steer / queue / stop /
-- cancel, pi_lsp.steering); dismissing the question sends nothing. run.prompt itself refuses a second
-- run; the server refuses a second pi/prompt too (RequestFailed); :PiAbort ends the first run.
local H = dofile(vim.env.PI_TEST_HELPERS)

H.run(function()
  require('pi_lsp').setup({ settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0 } })
  vim.cmd('edit greet.py')
  local client = H.client()
  H.check('client started', client ~= nil)

  vim.cmd('Pi first prompt')
  H.check('the reply is streaming', H.wait(20000, function() return H.transcript_has('Thinking about') end))
  H.check('the first run is active', require('pi_lsp').is_running())

  local asked = nil
  vim.ui.select = function(_, opts, on_choice)
    asked = opts.prompt
    on_choice(nil, nil) -- the user dismisses the question
  end
  vim.cmd('Pi second prompt')
  H.check('a second prompt asks how to send it', asked == require('pi_lsp.steering').PROMPT, asked)
  H.check('dismissed, nothing is sent', H.notified('nothing sent; your text is kept')
    and not H.transcript_has('second prompt'), H.notifications)
  H.check('run.prompt refuses a second run', not require('pi_lsp.run').prompt('second prompt'))
  H.check('the transcript says so', H.transcript_has('!! pi_lsp: a prompt is already running'))

  local done, err = false, nil
  require('pi_lsp.client').request(client, 'pi/prompt', { text = 'sneaking past the plugin' }, function(e)
    done, err = true, e
  end)
  H.wait(10000, function() return done end)
  H.check('the server refuses a second pi/prompt with RequestFailed', err and err.code == -32803, err)

  vim.cmd('PiAbort')
  H.check('the aborted run ended', H.wait_run(20000))
  local reply = require('pi_lsp.run').last_reply
  H.check('stopReason aborted', type(reply) == 'table' and reply.stopReason == 'aborted', reply)
  H.check('the transcript shows the abort', H.transcript_has('— aborted —'))
  H.check('once: not again as an error line', not H.transcript_has('Request was aborted'),
    require('pi_lsp.transcript').lines())
end)
