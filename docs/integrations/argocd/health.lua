-- Argo CD health check for KServe InferenceGraph (serving.kserve.io/v1alpha1).
-- Reads status.conditions: Ready True is Healthy; Ready False is Degraded (with its reason and
-- message); Ready Unknown, no Ready condition yet, or a status older than the spec
-- (observedGeneration) is Progressing.
local hs = {}

local function describe(condition)
  local text = condition.type or "Condition"
  if condition.reason ~= nil and condition.reason ~= "" then
    text = text .. " (" .. condition.reason .. ")"
  end
  if condition.message ~= nil and condition.message ~= "" then
    text = text .. ": " .. condition.message
  end
  return text
end

if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the InferenceGraph controller to report status"
  return hs
end

local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. tostring(generation)
  return hs
end

local ready = nil
local failing = {}
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
  elseif condition.status == "False" then
    table.insert(failing, describe(condition))
  end
end

if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
  return hs
end

if ready.status == "True" then
  hs.status = "Healthy"
  if obj.status.url ~= nil and obj.status.url ~= "" then
    hs.message = "InferenceGraph is ready at " .. obj.status.url
  else
    hs.message = "InferenceGraph is ready"
  end
  return hs
end

local message = describe(ready)
if #failing > 0 then
  message = message .. "; " .. table.concat(failing, "; ")
end
if ready.status == "False" then
  hs.status = "Degraded"
else
  hs.status = "Progressing"
end
hs.message = message
return hs
