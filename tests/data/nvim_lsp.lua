-- Drives Neovim's built-in LSP client on `python -m aiscan lsp` (tests/test_nvim.py).
-- Reads AISCAN_PYTHON, AISCAN_ROOT (the repository), AISCAN_FILE and writes AISCAN_OUT (JSON).
local python, root, file, out = vim.env.AISCAN_PYTHON, vim.env.AISCAN_ROOT, vim.env.AISCAN_FILE,
  vim.env.AISCAN_OUT
local result = { error = nil }

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(result) }, out)
  vim.cmd("qa!")
end

local id = vim.lsp.start_client({
  name = "aiscan",
  cmd = { python, "-m", "aiscan", "lsp" },
  cmd_cwd = root,
  cmd_env = { PYTHONPATH = root },
  root_dir = vim.fn.fnamemodify(file, ":h"),
})
if not id then
  result.error = "the client did not start"
  finish()
end
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, id)

if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  result.error = "no diagnostics within 30 s"
  finish()
end
result.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(result.diagnostics, {
    line = d.lnum, code = d.code or lsp.code, message = d.message, severity = d.severity,
  })
end

local uri = vim.uri_from_bufnr(buf)
local function ask(method, params)
  local replies = vim.lsp.buf_request_sync(buf, method, params, 30000) or {}
  for _, reply in pairs(replies) do
    if reply.result ~= nil then return reply.result end
    if reply.err ~= nil then return { error = reply.err.message } end
  end
  return vim.NIL
end
local line = tonumber(vim.env.AISCAN_LOOP_LINE)
result.hover = ask("textDocument/hover",
  { textDocument = { uri = uri }, position = { line = line, character = 8 } })
result.lenses = ask("textDocument/codeLens", { textDocument = { uri = uri } })
vim.lsp.stop_client(id)
finish()
