-- wrk script: POST /v1/events with a fresh event per request, the same mix as
-- bench/_helpers/event-mix.ts (types, ~40% with an account and its email and phone, account IPs
-- from a few per account, devices and cards mostly the account's own; anonymous traffic draws IPs,
-- devices and cards from pools).
-- Environment: FS_KEY (API key), FS_ASYNC=1 for async events, FS_ANONYMOUS=1 for anonymous
-- events only, FS_HARSH=1 for the harsh mix: every event with an account brings a device (fp_id)
-- and a card (bin, last4, card_token) never seen before, whatever its type (issue 10).
local key = os.getenv("FS_KEY") or ""
local async = os.getenv("FS_ASYNC") == "1"
local harsh = os.getenv("FS_HARSH") == "1"
local types = {"payment","payment","payment","login","login","registration","deposit","withdrawal","payout"}
local countries = {"DE","FR","GB","US","NL","ES","IT","PL"}
local bins = {"411111","555555","378282","601111","424242"}
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
-- Harsh mix: values unique to this wrk run (a random prefix) and to the request (a counter).
local run = string.format("%08x", math.random(0, 0x7fffffff))
local fresh = 0

local function uuid()
  return string.format("%08x-%04x-4%03x-%04x-%04x%08x", math.random(0, 0x7fffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), 0x8000 + math.random(0, 0x3fff), math.random(0, 0xffff), math.random(0, 0x7fffffff))
end

request = function()
  local t = types[math.random(#types)]
  local parts = {'{"event_id":"', uuid(), '","event_type":"', t, '"'}
  if async then parts[#parts+1] = ',"async":true' end
  local hasAccount = os.getenv("FS_ANONYMOUS") ~= "1" and math.random() < 0.4
  local a = math.random(0, 19999) -- 20,000 active accounts
  local ipIndex
  if hasAccount and math.random() < 0.9 then ipIndex = a * 3 + math.random(0, 2) else ipIndex = 150000 + math.random(0, 199999) end
  local ip = string.format("10.%d.%d.%d", math.floor(ipIndex / 65536) % 256, math.floor(ipIndex / 256) % 256, ipIndex % 256)
  parts[#parts+1] = ',"context":{"ip":"' .. ip .. '","user_agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36","session_id":"s' .. math.random(1, 1000000000) .. '"'
  if harsh and hasAccount then
    fresh = fresh + 1
    parts[#parts+1] = ',"fp_id":"fp_h' .. run .. '_' .. fresh .. '"'
  elseif math.random() < 0.6 then
    if hasAccount and math.random() < 0.95 then parts[#parts+1] = ',"fp_id":"fp_a' .. a .. '"'
    else parts[#parts+1] = ',"fp_id":"fp_' .. math.random(0, 79999) .. '"' end
  end
  parts[#parts+1] = '}'
  if hasAccount then
    local c = countries[(a % #countries) + 1]
    parts[#parts+1] = ',"external_account_id":"user-' .. a .. '","user":{"email":"user' .. a .. '@example' .. (a % 7) .. '.com","phone":"+4915' .. string.format("%09d", 10000000 + a * 37) .. '","country":"' .. c .. '","registered_at":"2024-0' .. (1 + a % 9) .. '-1' .. (a % 9) .. 'T00:00:00Z"}'
  end
  if harsh and hasAccount then
    parts[#parts+1] = ',"payment":{"amount_cents":' .. (100 + math.random(0, 199999)) .. ',"currency":"EUR","method":"card","bin":"' .. math.random(40000000, 59999999) .. '","last4":"' .. string.format("%04d", math.random(0, 9999)) .. '","billing_country":"' .. countries[math.random(#countries)] .. '","card_token":"tok_h' .. run .. '_' .. fresh .. '"}'
  elseif t == "payment" or t == "deposit" or t == "withdrawal" or t == "payout" then
    local card = math.random(0, 29999)
    if hasAccount and math.random() < 0.95 then card = 100000 + a end
    parts[#parts+1] = ',"payment":{"amount_cents":' .. (100 + math.random(0, 199999)) .. ',"currency":"EUR","method":"card","bin":"' .. bins[(card % #bins) + 1] .. '","last4":"' .. (1000 + card % 9000) .. '","billing_country":"' .. countries[math.random(#countries)] .. '","card_token":"tok_' .. card .. '"}'
  end
  parts[#parts+1] = '}'
  return wrk.format("POST", "/v1/events", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key}, table.concat(parts))
end
