-- Steering a running agent (issue 19; replay session steering.jsonl). While a bash call waits,
-- the user writes prompts: Cancel sends nothing and keeps the draft, Steer goes with the next model
-- request, Queue runs when the run would end; the transcript shows them marked. In a second run a
-- message queued with <LocalLeader>q is left undelivered by "Stop the agent" and comes back into the
-- prompt buffer. The Python test checks the session journal: exactly what was sent.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

-- The user at vim.ui.select (what a UI plugin would show): records the prompt and the labels and
-- picks the choice named by the next entry of `answers`.
local answers, asked = {}, {}
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for _, item in ipairs(items) do
    table.insert(labels, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(asked, { prompt = opts.prompt, labels = labels })
  local want = table.remove(answers, 1)
  for i, item in ipairs(items) do
    if item.how == want then
      return on_choice(item, i)
    end
  end
  on_choice(nil, nil) -- dismissed
end

local function exists(path)
  return H.uv.fs_stat(path) ~= nil
end

local function prompt_text()
  return table.concat(api.nvim_buf_get_lines(require('pi_lsp.prompt_buffer').buffer(), 0, -1, false), '\n')
end

H.run(function()
  require('pi_lsp').setup({ settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0,
    approvals = { rules = { { tool = 'bash', command = '^echo started', action = 'allow' } } } } })
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)

  vim.cmd('Pi run the job')
  H.check('the bash call is running', H.wait(30000, function() return exists('started.txt') end))

  -- Cancel, from the prompt buffer: nothing sent, the draft stays
  vim.cmd('Pi')
  vim.cmd('stopinsert')
  local prompt_buf = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(prompt_buf, 0, -1, false, { 'never mind' })
  answers = { 'cancel' }
  vim.cmd('write')
  H.check('a prompt during a run asks how to send it', #asked == 1 and asked[1].prompt:find('the agent is running', 1, true), asked)
  H.check('the choices: steer, queue, stop, cancel', asked[1] and #asked[1].labels == 4
    and asked[1].labels[1]:find('^Steer') and asked[1].labels[2]:find('^Queue')
    and asked[1].labels[3]:find('^Stop the agent') and asked[1].labels[4]:find('^Cancel'), asked)
  H.check('cancel keeps the draft', prompt_text() == 'never mind', prompt_text())
  H.check('cancel shows nothing in the transcript', not H.transcript_has('never mind'))

  -- Steer, from the prompt buffer
  api.nvim_buf_set_lines(prompt_buf, 0, -1, false, { 'use staging' })
  answers = { 'steer' }
  vim.cmd('write')
  H.check('the steering message is shown marked', H.wait(10000, function() return H.transcript_has('> [steering] use staging') end))
  H.check('the prompt buffer is emptied once sent', prompt_text() == '', prompt_text())
  vim.cmd('close')

  -- Queue, from :Pi {text}
  answers = { 'queue' }
  vim.cmd('Pi then run the tests')
  H.check('the queued message is shown marked', H.wait(10000, function() return H.transcript_has('> [queued] then run the tests') end))
  H.check('the run is still the first one', require('pi_lsp').is_running())

  local f = assert(io.open('go', 'w'))
  f:close()
  H.check('the run ended', H.wait_run(30000))
  local reply = require('pi_lsp.run').last_reply
  H.check('it ended normally, everything delivered', type(reply) == 'table' and reply.stopReason == 'stop'
    and (reply.undelivered == nil or reply.undelivered == vim.NIL), reply)
  local steer_row = H.transcript_row('> [steering] use staging')
  local staging_row = H.transcript_row('Understood, staging it is.')
  local queued_row = H.transcript_row('> [queued] then run the tests')
  local tests_row = H.transcript_row('Tests ran.')
  H.check('the steering answer follows the steering message, the queued run comes last',
    steer_row and staging_row and queued_row and tests_row and steer_row < staging_row and staging_row < tests_row
    and queued_row < tests_row, require('pi_lsp.transcript').lines())

  -- a second run: a message queued with <LocalLeader>q, then "Stop the agent"
  vim.cmd('Pi second job')
  H.check('the second bash call is running', H.wait(30000, function() return exists('started2.txt') end))
  vim.cmd('Pi')
  vim.cmd('stopinsert')
  api.nvim_buf_set_lines(0, 0, -1, false, { 'and tidy up' })
  vim.cmd([[normal \q]])
  H.check('<LocalLeader>q queues without asking', H.wait(10000, function() return H.transcript_has('> [queued] and tidy up') end)
    and #asked == 3, asked)
  vim.cmd('close')
  answers = { 'stop' }
  vim.cmd('Pi stop here')
  H.check('"Stop the agent" aborts the run', H.wait_run(30000))
  reply = require('pi_lsp.run').last_reply
  H.check('the queued message was not delivered', type(reply) == 'table' and reply.stopReason == 'aborted'
    and type(reply.undelivered) == 'table' and reply.undelivered[1] == 'and tidy up', reply)
  H.check('the transcript says it was not sent',
    H.transcript_has('!! not sent (the run ended first), back in the prompt buffer: and tidy up'))
  H.check('it is back in the prompt buffer', prompt_text() == 'and tidy up', prompt_text())
  H.check('the user was told', H.notified('1 message(s) were not sent'))
end)
