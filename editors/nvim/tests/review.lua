-- Review before apply (issue 18; replay session nvim_review.jsonl, pi.edit.review = "before"): the
-- review float shows each hunk as a diff; `a` accepts the first hunk of greet.py and `R` rejects
-- the second with a typed reason; `X` rejects the write of notes.txt; `A` accepts the edit of
-- closed.txt. Only accepted hunks land; the model is told the reason.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, edit = { review = 'before' } },
  })
  local keys = { 'a', 'Rkeep bye<CR>', 'X', 'A' }
  local seen, handled, step = {}, nil, 0
  local timer = H.uv.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    local review = require('pi_lsp.review').current
    if not H.armed(review) or review == handled then
      return
    end
    handled = review
    table.insert(seen, { lines = api.nvim_buf_get_lines(review.buf, 0, -1, false), review = review })
    step = step + 1
    if step == 1 then -- a stray <CR> (meant for an earlier review) sends nothing while hunks are
      -- undecided; then the first hunk, then the second with a reason, as two separate keystrokes
      api.nvim_input('<CR>a')
      vim.defer_fn(function()
        table.insert(seen[1], api.nvim_buf_is_valid(review.buf) and api.nvim_buf_get_lines(review.buf, 0, -1, false) or {})
        api.nvim_input('Rkeep bye<CR>')
      end, 300)
    else
      api.nvim_input(keys[step + 1])
    end
  end))
  H.timers = { timer }
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  H.check('the client advertises the review', H.client().config.capabilities.experimental.pi.review == true)
  vim.cmd('Pi change the greetings')
  H.check('the run ended', H.wait_run(30000))
  H.check('three reviews were shown', #seen == 3, #seen)
  local first = table.concat(seen[1] and seen[1].lines or {}, '\n')
  H.check('the review names the tool, file and hunk count', first:find('pi-lsp review · edit greet.py · 2 hunks', 1, true), first)
  H.check('the first hunk is a diff with 1-based lines', first:find('? hunk 1/2 @@ -2 +2 @@\n   -    return "hi"\n   +    return "hello"', 1, true), first)
  H.check('the second hunk too', first:find('? hunk 2/2 @@ -6 +6 @@\n   -    return "bye"\n   +    return "ciao"', 1, true), first)
  local after_a = table.concat(seen[1] and seen[1][1] or {}, '\n')
  H.check('after a, the first hunk shows accepted', after_a:find('✓ hunk 1/2', 1, true), after_a)
  H.check('and the cursor moved to the second', after_a:find('? hunk 2/2', 1, true)
    and seen[1].review.selected == 2, after_a)
  local write = table.concat(seen[2] and seen[2].lines or {}, '\n')
  H.check('the write of a new file is one hunk of added lines', write:find('write notes.txt · 1 hunk', 1, true)
    and write:find('@@ -0,0 +1,2 @@\n   +one\n   +two', 1, true), write)
  local buf = H.buf('greet.py')
  local text = buf and H.text(buf) or ''
  H.check('only the accepted hunk landed in the buffer', text:find('return "hello"', 1, true)
    and text:find('return "bye"', 1, true) and not text:find('ciao', 1, true), text)
  H.check('and was saved', (H.read('greet.py') or ''):find('return "hello"', 1, true) ~= nil)
  H.check('the rejected write created nothing', H.uv.fs_stat('notes.txt') == nil)
  H.check('A accepted the edit of closed.txt', H.read('closed.txt') == 'FIRST\nsecond\n', H.read('closed.txt'))
  H.check('no review is left open', require('pi_lsp.review').current == nil)
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop', require('pi_lsp.run').last_reply)
end)
