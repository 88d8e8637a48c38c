-- The transcript as a person reads it (issue 15; replay session nvim_transcript.jsonl), the prompt
-- written in the prompt buffer: Markdown text, one line per tool call folded over its details, the
-- edit as a highlighted diff, the live tail of a running command, an error marked, the end state.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({ prompt_guard_ms = 50, settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0 } })
  H.approver(function() return 'o' end)
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)

  vim.cmd('Pi')
  local prompt_buf = api.nvim_get_current_buf()
  vim.cmd('stopinsert')
  H.check(':Pi without text opens the prompt buffer', api.nvim_buf_get_name(prompt_buf) == 'pi://prompt',
    api.nvim_buf_get_name(prompt_buf))
  api.nvim_buf_set_lines(prompt_buf, 0, -1, false, { 'Fix the greeting', 'and run the check' })
  vim.cmd('write')
  H.check(':w sends the prompt', require('pi_lsp').is_running())
  H.check('the prompt buffer is emptied', table.concat(api.nvim_buf_get_lines(prompt_buf, 0, -1, false), '') == '')
  vim.cmd('close')

  local live = nil
  H.check('the run ended', H.wait(40000, function()
    if not live then
      local header = H.transcript_row('● bash for i in')
      local tick = H.transcript_row('  │ tick 1')
      if header and tick and tick > header then
        live = require('pi_lsp.transcript').lines()
      end
    end
    return not require('pi_lsp').is_running()
  end))
  H.note('live', live)
  H.check('the output showed live under the running call', live ~= nil)

  local t = require('pi_lsp.transcript')
  local quote = H.transcript_row('> and run the check')
  H.check('the prompt is a Markdown quote', H.transcript_row('> Fix the greeting') and quote)
  H.check('a blank line ends the quote before the text', quote and t.lines()[quote + 1] == '' and t.lines()[quote + 2] == '## Plan',
    t.lines())
  H.check('the assistant text is Markdown', H.transcript_row('## Plan') and H.transcript_row('- edit `greet.py`'))
  H.check('the buffer is highlighted as Markdown', vim.bo[t.buffer()].syntax == 'markdown')
  local edit = H.transcript_row('✓ edit greet.py')
  local ok_bash = H.transcript_row('✓ bash for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.4; done')
  local bad_bash = H.transcript_row('✗ bash echo boom; exit 3')
  H.check('one readable line per call', edit and ok_bash and bad_bash, t.lines())
  H.check('the edit shows as a diff', H.transcript_has('  -    return "hi"') and H.transcript_has('  +    return "hello"'))
  local minus = H.transcript_row('  -    return "hi"')
  H.check('removed lines are highlighted', minus and vim.tbl_contains(H.transcript_groups(minus), 'PiLspDiffDelete'),
    minus and H.transcript_groups(minus))
  H.check('the whole output is in the result', H.transcript_has('  │ tick 1') and H.transcript_has('  │ tick 6'))
  H.check('the error is marked', bad_bash and vim.tbl_contains(H.transcript_groups(bad_bash), 'PiLspError'),
    bad_bash and H.transcript_groups(bad_bash))
  H.check('the error output is shown', H.transcript_has('  │ boom'))
  H.check('the end of the run', H.transcript_row('— done —'))

  -- folds as the user sees them in the transcript window
  local win = t.open()
  local function fold(row)
    return api.nvim_win_call(win, function()
      return { vim.fn.foldclosed(row), vim.fn.foldclosedend(row), vim.fn.foldtextresult(row) }
    end)
  end
  local f = fold(edit)
  H.note('edit_fold', f)
  H.check('a finished call is folded under its line', f[1] == edit and f[2] > edit + 2, f)
  H.check('the fold shows the call line', f[3]:find('✓ edit greet.py', 1, true) == 1, f)
  local minus_fold = fold(minus)
  H.check('the diff is inside the fold', minus_fold[1] == edit, minus_fold)
  H.check('the text is not folded', fold(H.transcript_row('## Plan'))[1] == -1)
  api.nvim_win_call(win, function() vim.cmd(edit .. 'foldopen') end)
  H.check('the fold opens to the arguments and the result', fold(edit)[1] == -1 and fold(minus)[1] == -1)
  local args = { t.lines()[edit + 1], t.lines()[edit + 2] }
  H.check('the arguments are in the fold, readable', args[1] == '  edits: 1 replacement(s)' and args[2] == '  path: greet.py', args)
  H.check('a bash command is shown as typed', H.transcript_row('  $ echo boom; exit 3'))
end)
