-- Runs one documented Neovim snippet (docs/editors.md) as a user's config would, then opens
-- files and reads back what the editor got from aiscan (tests/test_nvim.py).
-- Reads AISCAN_SNIPPET (the snippet's Lua), AISCAN_FILES (JSON: path and 0-based loop line of
-- each file to open), AISCAN_LSPCONFIG (an nvim-lspconfig checkout, or empty), AISCAN_IGNORED
-- (a file the snippet must not attach to) and writes AISCAN_OUT (JSON).
local result = { files = {}, log = {} }

local function finish()
  result.messages = vim.fn.execute("messages") -- what the user would see (`:messages`)
  vim.fn.writefile({ vim.fn.json_encode(result) }, vim.env.AISCAN_OUT)
  vim.cmd("qa!")
end

local function fail(message)
  result.error = message
  finish()
end

local function clients_of(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf)) -- before 0.10
end

-- The server's window/logMessage lines, kept to check what it says about a file it skips.
vim.lsp.handlers["window/logMessage"] = function(_, params)
  table.insert(result.log, params.message)
end

vim.cmd("filetype on")
vim.g.c_syntax_for_h = 1 -- as docs/editors.md advises: `.h` files are C, not C++
if (vim.env.AISCAN_LSPCONFIG or "") ~= "" then
  vim.opt.runtimepath:prepend(vim.env.AISCAN_LSPCONFIG)
end
local loaded, problem = pcall(dofile, vim.env.AISCAN_SNIPPET)
if not loaded then
  fail("the snippet failed: " .. tostring(problem))
end

local function ask(buf, method, params)
  local replies = vim.lsp.buf_request_sync(buf, method, params, 30000) or {}
  for _, reply in pairs(replies) do
    if reply.result ~= nil then return reply.result end
    if reply.err ~= nil then return { error = reply.err.message } end
  end
  return vim.NIL
end

local client
for _, wanted in ipairs(vim.fn.json_decode(vim.env.AISCAN_FILES)) do
  local opened, why = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(wanted.path))
  if not opened then
    fail("opening " .. wanted.path .. " failed: " .. tostring(why))
  end
  local buf = vim.api.nvim_get_current_buf()
  local seen = {}
  if not vim.wait(5000, function() return #clients_of(buf) > 0 end, 50) then
    fail(string.format("no client attached to %s (filetype %s) within 5 s", wanted.path,
      vim.bo[buf].filetype))
  end
  if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
    fail("no diagnostics for " .. wanted.path .. " within 30 s")
  end
  client = clients_of(buf)[1]
  seen.filetype = vim.bo[buf].filetype
  seen.client = client.name
  seen.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(seen.diagnostics, {
      line = d.lnum, code = d.code or lsp.code, message = d.message, severity = d.severity,
    })
  end
  local uri = vim.uri_from_bufnr(buf)
  seen.hover = ask(buf, "textDocument/hover",
    { textDocument = { uri = uri }, position = { line = wanted.line, character = 8 } })
  -- the lenses as the docs show them: `vim.lsp.codelens.refresh()`, then what it stored
  vim.lsp.codelens.refresh()
  vim.wait(30000, function() return #vim.lsp.codelens.get(buf) > 0 end, 50)
  seen.lenses = vim.lsp.codelens.get(buf)
  result.files[vim.fn.fnamemodify(wanted.path, ":t")] = seen
end

-- A file of a language aiscan does not read: the snippet's file types leave it alone; a client
-- attached to it anyway (by hand) gets the server's one log line saying why it is skipped.
local ignored = vim.env.AISCAN_IGNORED
vim.cmd("edit " .. vim.fn.fnameescape(ignored))
local buf = vim.api.nvim_get_current_buf()
vim.wait(500, function() return #clients_of(buf) > 0 end, 50)
result.ignored = { filetype = vim.bo[buf].filetype, clients = #clients_of(buf) }
vim.lsp.buf_attach_client(buf, client.id)
local name = vim.fn.fnamemodify(ignored, ":t")
vim.wait(10000, function()
  for _, line in ipairs(result.log) do
    if line:find(name, 1, true) then return true end
  end
  return false
end, 50)
vim.lsp.stop_client(client.id)
finish()
