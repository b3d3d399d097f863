// Package bkiam is a client for the BlueKing IAM authorization API (batch grant and revoke on
// instances and paths, creator grants), through the API gateway or the legacy ESB, and for the IAM
// backend's policy-list API that reads grants back.
//
// This comment is the project's reference for how the real IAM server behaves. It was worked out
// from the server's public source (the bk-iam-saas SaaS, the bk-iam backend, the ESB channel
// configuration) and the official SDKs, and checked against IAM's published API pages; where the
// pages and the code disagree, the code is what servers do, and both are noted. The sandbox
// (internal/sandbox) emulates what is written here. No official Go SDK can grant or revoke, so the
// project has its own client.
//
// # Endpoints and transports
//
// Three authorization calls, each a POST with a JSON body, reachable two ways. Through ESB (the
// legacy PaaS) and through the API gateway (gateway "bk-iam", with its stage):
//
//	POST {esb}/api/c/compapi/v2/iam/authorization/batch_instance/
//	POST {esb}/api/c/compapi/v2/iam/authorization/batch_resource_creator_action/
//	POST {esb}/api/c/compapi/v2/iam/authorization/batch_path/
//	POST {gw}/api/v1/open/authorization/batch_instance/
//	POST {gw}/api/v1/open/authorization/batch_resource_creator_action/
//	POST {gw}/api/v1/open/authorization/batch_path/
//
// The ESB path becomes the gateway path by replacing the prefix /api/c/compapi/v2/iam/ with
// /api/v1/open/. The trailing slash belongs to every path; without it a server may redirect. {gw}
// is the gateway base with its stage, e.g. https://bkapi.example.com/api/bk-iam/prod.
//
// Credentials: the gateway takes X-Bkapi-Authorization, a JSON object as a string
// ({"bk_app_code":"…","bk_app_secret":"…"}), and needs no user. ESB takes bk_app_code and
// bk_app_secret in the body or in that same header, and also wants a user: bk_token, or bk_username
// when the app is on ESB's skip-login whitelist. Whether a call may grant is decided by IAM, not by
// the user: the app must be a registered client of the system, and the (system, action) — for
// creator grants the (system, resource type) — must be on IAM's API allow-list; otherwise 1902403.
// Multi-tenant sites also expect X-Bk-Tenant-Id (Config.TenantID).
//
// Every attempt carries a fresh 32-hex-character X-Request-Id (the backend ignores ids of any other
// length); servers echo it, and gateways add X-Bkapi-Request-Id. Errors name both. The Python SDK
// turns certificate checks off; this client verifies certificates with the caller's http.Client
// (Config.HTTPClient).
//
// # batch_instance
//
// A grant or revoke of actions on resource instances:
//
//	{"system": "bk_cmdb", "operate": "grant", "asynchronous": false, "expired_at": 4102444800,
//	 "subject": {"type": "user", "id": "alice"},
//	 "actions": [{"id": "edit_host"}, {"id": "view_host"}],
//	 "resources": [{"system": "bk_cmdb", "type": "host",
//	                "instances": [{"id": "1", "name": "host1"}, {"id": "2", "name": "host2"}]}]}
//
// The fields:
//   - operate is "grant" or "revoke". asynchronous is accepted and ignored: every call is
//     synchronous. Unknown keys are ignored.
//   - subject.type is "user" or "group" (the published pages say user only; the server accepts
//     groups, whose ids are numeric).
//   - actions is not empty, and the same resources apply to each action: one policy per action.
//   - resources has one entry per resource type the action relates to, in the action's order (a
//     "combined resource" when there are several). A wrong count, order or type fails with 1902417.
//     An action related to no type takes resources [], and such actions cannot share a call with
//     related ones.
//   - An instance id has at most 36 characters (a server setting); a name must not be blank and is
//     never verified.
//   - An EMPTY instances list means ANY instance: unlimited permission. This client refuses to send
//     one (ErrEmptyInstances), on revoke as well.
//   - expired_at is optional unix seconds: 0, or after now and at most 4102444800
//     (PermanentExpiry). A past value fails ("greater than now timestamp").
//
// # batch_path
//
// Like batch_instance, but each resource entry carries paths (lists of nodes, outermost first)
// instead of instances:
//
//	"resources": [{"system": "bk_sops", "type": "mini_app", "paths": [[
//	    {"system": "bk_sops", "type": "project", "id": "project1", "name": "p1"},
//	    {"system": "bk_sops", "type": "mini_app", "id": "mini_app1", "name": "m1"}]]}]
//
// A node's name is required, and may be "" only when its id is "*"; its system may be left out
// (the server fills it in). The answer has the same shape as batch_instance's.
//
// # batch_resource_creator_action
//
//	{"system": "bk_sops", "type": "mini_app", "creator": "alice",
//	 "instances": [{"id": "mini_app1", "name": "first mini app",
//	                "ancestors": [{"system": "bk_sops", "type": "project", "id": "project1"}]}]}
//
// It grants the creator every action the system registered for the type in its
// resource-creator-actions configuration, a tree of {id, actions: [{id, required}],
// sub_resource_types: [...]} ("required" is ignored). A system without that configuration, or
// without a node for the type, fails with 1902412. instances is not empty. Ancestors carry no name:
// IAM asks the system's callback, and an ancestor the callback does not know fails with 1902416.
// Each instance becomes the path ancestors + instance. Creator policies are permanent and make an
// existing policy permanent. There is no creator revoke: undoing one takes a batch_path revoke of
// each path for each action the grant returned.
//
// # Semantics
//
// IAM keeps one policy per (subject, system, action) for direct grants.
//   - A grant merges into the existing policy, which keeps its policy_id; granting what is already
//     held changes nothing (grant is idempotent).
//   - A revoke never fails for what is not held: actions without a policy are skipped (data may be
//     []), instances not in the policy leave it as it is (it is still listed). A revoke that empties
//     a policy deletes it and answers its old id; a later grant creates a new id.
//   - A new user policy granted without expired_at (or with 0) expires 365 days later, not never:
//     permanent grants send PermanentExpiry. Group policies never expire. A re-grant only ever
//     raises an expiry, never lowers it.
//   - Grants to the user "admin" (any case) are ignored: the request's actions are echoed back
//     with policy_id 0.
//   - Instances are stored as paths: a plain instance is the one-node path /host,1/. A revoke
//     removes paths by string equality, so an instance granted with ancestors is not removed by a
//     batch_instance revoke of its id; that takes batch_path with the full path.
//   - IAM serialises the calls of one subject with a lock: parallel calls for one subject gain
//     nothing.
//   - The answer's policy_id is the SaaS's own row id. The read API below does not know it.
//
// # Answers and errors
//
// Success is {"result":true,"code":0,"message":"OK","data":[{"action":{"id":"edit_host"},
// "policy_id":12,"statistics":{"instance_count":2}}]} (the published pages show "ok" and no result;
// statistics is undocumented but always there). A known server bug: after a grant, data lists every
// custom policy the subject holds in the system, not only the requested actions, so callers pick
// entries by action id (PolicyResult).
//
// Three layers answer, each with its own envelope:
//   - The IAM SaaS: {"result":false,"code":N,"message":"<text> (<NAME>)","data":…}, HTTP 200 except
//     401, 403, 404 and 500. Codes: 1902401 unauthorized, 1902403 forbidden ("app_code X can not
//     access system Y", "authorization_instance api don't support the [edit_host] of
//     system[bk_cmdb]"), 1902404 not found, 1902412 validation (the message is the JSON of the
//     field errors, e.g. {"non_field_errors": ["maximum number of instance grant 200"]}), 1902414
//     bad JSON, 1902416 bad arguments, 1902417 the resources do not match the action's resource
//     types, 1902000 upstream failed, 1902500 system error.
//   - ESB: the same fields plus request_id, always HTTP 200. Its own codes: 1306000 app or user
//     check failed, 1306403 no permission, 1306429 rate limited, 1306201 upstream error. SaaS
//     bodies pass through inside the 200.
//   - The API gateway: {"result":false,"code":16xxxxx,"code_name":"…","message":"…","data":null} with
//     the headers X-Bkapi-Error-Code and X-Bkapi-Error-Message, and real 4xx/5xx statuses: 1640001
//     bad arguments (also bad app credentials), 1640301 app without permission, 1640401 not found,
//     1642902/1642903 rate limited (429), 1650200/1650201 bad gateway, 1650401 upstream timeout.
//
// The client reads them from the outside in: the gateway's error header, then the HTTP status, then
// the body code (see interpretInto). Messages on these APIs are English, but some server texts stay
// Chinese (the 10000-instance limit, for one), so error handling rests on codes, with one exception:
// batch_path reports a resource type the action does not relate to as a 1902412 whose text says so
// ("action(x) not support to grant instance"), where the other calls answer 1902417.
// Error.Is maps codes onto the sentinels ErrValidation (and, for 1902417 and that 1902412,
// ErrResourceMismatch),
// ErrForbidden, ErrUnauthorized, ErrRateLimited, ErrTransient, ErrNotFound and
// ErrUnexpectedResponse.
//
// Only safe, transient failures are retried: network errors, 429 (honouring Retry-After),
// 502/503/504, 1306429, 164290x, 165xxxx, 1306201 and 1902000. Grant and revoke are idempotent, so
// repeating them is safe; validation errors are never retried. A 1902000 is the SaaS's failed call to
// IAM's backend, whose answer it quotes: "request iam fail! Request=[…]error=…" when none came (a
// retry may succeed), "request iam error! Request=[…] Response[code=N, message=…]" when the backend
// answered. A backend code 19014xx (bad request, not found, conflict such as the per-member group
// quota) but 1901429 (its rate limit), or its system error for a lookup that found nothing ("sql: no
// rows in result set": an unknown member, action or system), is a definite refusal made before any
// write: it is neither retried nor an unknown outcome (Error.backendRefused). The SDKs time out after 5–10 s; the
// gateway waits up to 180 s for the SaaS.
//
// # Limits
//
//   - Per resource entry: at most 200 instances (or paths) on grant, 1000 on revoke; per creator
//     call at most 200 instances. 200 is the server setting BKAPP_AUTHORIZATION_INSTANCE_LIMIT's
//     default; the published pages say 20 or 1000. Over a limit the whole call fails with 1902412.
//   - At most 10000 instances per (subject, action, resource type) after the merge; a grant past it
//     fails.
//   - Instance ids: at most 36 characters.
//
// # Reading grants back
//
// Only through the API gateway (ESB has no read API; ErrReadNeedsGateway). The routes belong to the
// bk-iam backend and answer its envelope {"code":0,"message":"ok","data":…} — no result field, and
// errors come with HTTP 200 and the code in the body.
//
// The policy list of one action, every subject's policies, users and groups alike:
//
//	GET {gw}/api/v1/systems/{system}/policies?action_id=A&page=P&page_size=S&timestamp=T[&type=rbac]  (the SDKs use it)
//	GET {gw}/api/v1/open/systems/{system}/policies/?…  (newer; cannot be read through a real gateway, see below)
//
// This client reads the first (ListPolicies, ScanPolicies): the default list (type=abac), and, for
// groups, the RBAC list (type=rbac), which alone shows a group's grants IAM stores as RBAC
// relations. A subject can have several rows in a list; ScanCache.Lookup returns all of them.
//
// The app must be a client of the system, else 1901401 ("unauthorized:app(X) is not allowed to
// call system (S) api"); an unknown system or action is 1901404; page ≥ 1, page_size 10–500
// (default 100). timestamp defaults to today 00:00 server time and drops policies that expired at
// or before it (the list keeps expired_at > timestamp); a timestamp more than one day before today
// 00:00 is refused with 1901400. The system is checked (1901404) before the client (1901401).
//
// The answer's data:
//
//	{"metadata": {"system": "bk_cmdb", "action": {"id": "edit_host"}, "timestamp": 1593273600},
//	 "count": 3,
//	 "results": [{"version": "1", "id": 3, "subject": {"type": "user", "id": "alice", "name": "Alice"},
//	              "expression": {…}, "expired_at": 4102444800}]}
//
// results is null, not [], when empty or past the end. Rows whose subject cannot be resolved are
// skipped but still counted, so a page can be short before the end: the count says when the list
// ends (ScanPolicies). id is the backend's own id — never the SaaS policy_id a grant returned —
// stable while the policy exists and new after it was emptied and granted again. Callers still drop
// rows with expired_at ≤ now. The route has no rate limit; a whole scan costs ceil(count/500) calls
// per action, whatever the number of subjects of interest (ScanCache shares one scan among them).
//
// The backend also serves one policy by backend id (GetPolicy):
//
//	GET {gw}/api/v1/systems/{system}/policies/{id} → {version, id, system, subject: {type, id, name}, action: {id}, expression, expired_at}
//
// an expired row as well (a real IAM answered one expired that day), 1901404 "not found:policy not
// found" for an id no ABAC row has (ErrPolicyNotFound; an RBAC row's id from the type=rbac list is
// one: the route reads ABAC rows, and bk-iam's source takes ?type=rbac for the others, which this
// client does not send), 1901403 for another system's policy, 1901401 when the app is not a client
// of the path's system, all in HTTP 200. It cannot find a grant — no API maps the SaaS policy_id a
// grant returned to a backend id — but it reads a row the policy list or the debug output below
// named.
//
// The rows that count for one subject, by backend id, come from the effective-permission query
// with the backend's debug output (QuerySubjectRows):
//
//	POST {gw}/api/v2/policy/systems/{system}/query_by_actions/?debug=1&force=1
//	{"subject": {"type": "user", "id": "carol"}, "actions": [{"id": "host_edit"}], "resources": []}
//
// That batch route always checks that the request gives one resource of every related type of
// another system (bk-iam BatchQueryV2ByActions calls pdp.Query with its remote check on): for an
// action scoped to another system's type — bk_job's access_business to bk_cmdb's biz, as most of
// bk_job's and bk_sops' actions are to CMDB's business or host — it answers 1901500 "…
// request resources not match action" (HTTP 500, or 200 with the code with ?debug), and the
// whole call fails, every other action of it too; a placeholder remote resource only makes the
// answer IAM's for that one instance. The single-action query skips the check when no resources
// are given (bk-iam QueryV2; seen on the real IAM run for this project), with the same debug
// output, the action's entry itself at the tree's root:
//
//	POST {gw}/api/v2/policy/systems/{system}/query/?debug=1&force=1
//	{"subject": {…}, "action": {"id": "access_business"}, "resources": []}   → data: the expression
//
// So the queries (queryEach) ask such an action alone — told by the system's model (AskAlone,
// AloneIn), or after the batch refused it — and the others ten to a call (MaxQueryActions: the
// debug tree repeats each expression about four times). The single route answers an unknown
// action 1901400, a frozen subject 1901403 "… has been frozen" (ErrSubjectFrozen) as every
// policy route does.
//
// Any value of debug turns it on (the backend only asks whether the key is there), and the answer
// gains a top-level "debug" beside code, message and data: a root whose sub_debugs hold one entry
// per action, in order, each {time, context, steps [{index, name}], evals, error, sub_debugs}. An
// entry's context.action.ID is its action and context.subject.Attribute.Attribute is {"department":
// [keys], "pk": the subject's internal key}; for a subject IAM does not know (a user never synced,
// a group that does not exist, an id such as "abc") it is {}, the entry's steps stop after "Fetch
// subject details" and data answers {}. Below, the policy query's entry lists the rows with their
// internal expressions ({Version, ID, Expression, ExpressionSignature, ExpiredAt}) and, one level
// deeper, the database's entry lists in context.effectPolicies the rows it read: {PK, SubjectPK,
// ExpressionPK, ExpiredAt}, PK being the backend id, SubjectPK the key of the subject holding the
// row (the subject's own rows, its groups' — joined directly, through a department or an ancestor,
// through a subject template — with the group's key). An action related to no resource type adds
// "without_resource_types": true and ExpressionPK -1; no rows, "got_no_policies": true. The rows
// come in the database index's order (by subject key, then expiry), not by id. Rows IAM keeps as
// RBAC relations are not among them: the backend reads them apart (the groups holding them are in
// the entry's rbacGroupPks), while data still counts them. force bypasses the backend's caches: its
// database query keeps rows with expired_at >= now, where the caches keep expired_at > now (without
// force the cache's entries have the same shape). Managers short-circuit: the message "ok, as
// super_manager or system_manager", "any" for each action and no "debug" key at all. With debug, a
// system error (1901500, e.g. an unknown action on this route) answers HTTP 200 and carries the
// failing action's entry, where without it the v2 routes answer 500. The rest of the tree (times,
// steps, the merged expression, evals, the internal expressions) is the backend's to change, so the
// client reads only the parts above, wherever they sit under an action's entry, and refuses a tree
// that lacks them or an answer too large to read (ErrDebugUnreadable, also an
// ErrUnexpectedResponse) or an answer without one (ErrNoDebug: a gateway or backend that does not
// pass ?debug on); its callers then read the policy lists instead. auth and auth_by_actions take debug too, auth's tree
// being the action's entry itself.
//
// Writes are synchronous: an answered grant or revoke is in the list at once (a backend with
// several replicas may serve an updated expression stale for up to about five minutes).
//
// Other reads are not drift detection. The effective-permission queries (POST
// /api/v1/policy/query, /api/v2/policy/systems/{s}/query/) merge a subject's own policies with its
// groups' and answer "any" for admin and system managers: a missing id proves a grant is lost, a
// present one proves nothing (and they are rate limited, 1901429). The management API's group
// policy list is exact but only for groups whose grade manager the system created through the API.
//
// # Access checks
//
// The backend answers whether a subject may do actions on resources (POST
// {gw}/api/v2/policy/systems/{s}/auth_by_actions/, at most 10 actions; AuthByActions) and with
// the merged expression of each action (…/query_by_actions/; QueryByActions), counting the
// subject's own policies and those of its groups (joined directly, through a department or an
// ancestor department, or through a subject template), template rows, and nothing expired. admin,
// super managers and the system's managers are answered true (or any) without a policy being read,
// with the message "ok, as super_manager or system_manager"; a grade manager is not. An unknown
// user is answered false, not an error. Each resource carries "attribute", a required key
// ({} is fine): the backend evaluates the policy against the id and what the attribute gives, and
// never looks an instance's path or attributes up itself, so a grant by topology
// ("host._bk_iam_path_" starts_with "/biz,1/") allows host 7 only when its path is sent,
// "attribute": {"_bk_iam_path_": ["/biz,1/"]}, and is false with {}; a condition on an attribute
// not sent is false. Resources that are not one of each of the action's related types are the
// backend's system error, 1901500 "… request resources not match action", not a 400; an unknown
// action is 1901400 "bad request:action.id invalid".
//
// # The model of a system
//
// What a system registered — its actions, resource types, instance selections and
// resource-creator configuration — through the gateway only (gateway resource system_query, public;
// SystemModel, ModelCache; ErrModelNeedsGateway on ESB):
//
//	GET {gw}/api/v1/model/systems/{system}/query?fields=actions,resource_types,instance_selections,resource_creator_actions
//
// Backend envelope, HTTP 200 for errors: 1901401 when the app is not a client of the system, 1901404
// for an unknown system. data.actions[] are {id, name, name_en, description, auth_type ("abac",
// "rbac", "all" or ""), type, hidden, version, related_resource_types: [{system_id, id,
// selection_mode, instance_selections: [{system_id, id, ignore_iam_path}]}], related_actions};
// related_resource_types are in the order a grant's resources must follow. data.resource_types[]
// are {id, name, name_en, parents: [{system_id, id}], …}. data.resource_creator_actions is {} for a
// system without a creator configuration, else {"config": [{id, actions: [{id, required}],
// sub_resource_types: […]}]}. The provider checks planned grants against it (check_model) and shows
// it in the bkiam_system data source.
//
// # The management API
//
// IAM's management API v2 lets an app manage, for its own system, grade managers (分级管理员), their
// user groups and the groups' members. Gateway only (ErrManagementNeedsGateway), under
// {gw}/api/v2/open/management/systems/{system}/, every route with a trailing slash:
//
//	POST   grade_managers/                  {name, description, members, authorization_scopes, subject_scopes, sync_perm, group_name} → {id}
//	GET    grade_managers/{id}/             {id, name, description, members, sync_perm, …} (no scopes, no sync group name)
//	PUT    grade_managers/{id}/             the create body, a full replace: sync_perm left out deletes the sync group
//	DELETE grade_managers/{id}/             {} at once; IAM deletes the grade manager, its groups and their members later
//	POST   grade_managers/{id|-}/groups/    {groups: [{name, description, readonly}] (≤ 10)} → [group ids]; "-" is the system manager
//	GET    grade_managers/{id}/groups/      ?page&page_size&inherit&id&name&description&action_id (name, description: case-insensitive substrings; action_id: groups holding a policy of that action in the path system) → {count, results}
//	PUT    groups/{id}/                     {name, description}: an empty field is kept as it was
//	DELETE groups/{id}/                     {} (members and policies go with it)
//	GET    groups/{id}/members/             ?page&page_size → {count, results: [{type, id, name, expired_at, created_at}]}, expired members included
//	POST   groups/{id}/members/             {members: [{type, id}] (≤ 1000), expired_at}: an upsert that only ever raises an expiry
//	DELETE groups/{id}/members/             ?type=user|department&ids=a,b,c (≤ 1000)
//	PUT    groups/{id}/members/-/expired_at/ {members: [{type, id}], expired_at}: raises present members' expiry
//	POST   groups/{id}/policies/            {system, actions: [{id}], resources: [{system, type, paths: [[{system, type, id, name}]]}]}: merged
//	DELETE groups/{id}/policies/            the same body, subtracted; an emptied policy is deleted
//	GET    groups/{id}/policies/            [{id (the action), policy_id, resource_groups: [{id, related_resource_types:
//	                                         [{system_id, type, condition: [{instances: [{type, path: [[nodes]]}]}]}]}]}]
//
// Group permissions (GrantGroupPolicies, RevokeGroupPolicies, GroupPolicies) are the policies of
// the authorization API — one per (system, group, action), permanent — so a group's instance grants
// and its management-API grants are one policy. Every action of a call gets the same resources, so
// actions are grouped by their resource types; a grant must stay inside the owning grade manager's
// authorization scope (else 400 1902412). The scope covers a grant by string prefix: both paths
// become "/type,id/…/" without systems, a scope path ending in ",*/" is cut to a prefix there, and
// the grant's path must start with the scope's. So a one-node "*" scope (/host,*/) admits grants of
// a single node (/host,5/) and not paths under ancestors (/biz,2/host,5/); a "*" above the last
// node is no wildcard (/biz,*/host,*/ admits nothing real); only a resource type with no paths
// (the unlimited scope) admits every instance of it. A one-node "*" in a grant, as in a scope that
// sync_perm copies to the sync group, is the literal id "*": IAM turns a one-node path into an id
// comparison, so it matches no real instance. In a grant, a resource type with no paths means every
// instance. An
// action related to no resource type is granted and revoked with "resources": [] (its listed row
// has "resource_groups": []); the field is a required list that may be empty but not null, and
// null answers 400 1902412 {"resources": ["This field may not be null."]}, so this client never
// sends null. The
// policy routes check the v1 allow-list names (group_policy_grant, _revoke, _list), and IAM's admin
// UI can grant group_policy_list only as "*". The list is normalised — paths grouped into instances
// by type, resource-group ids regenerated — so it is compared by meaning. The paths themselves
// come back node for node as granted: the SaaS checks them against the action's instance
// selections (400 when none matches) but stores them unchanged, deduplicating by the type and id of
// each node; only node names are rewritten when IAM learns of a rename. Never use DELETE
// groups/{id}/actions/-/policies/: the SaaS evaluates its action filter and throws the result away,
// deleting every custom policy of the group in the system.
//
// The app must be a client of the path's system and that system on the management allow-list for
// the route. Then IAM checks ownership by the grade manager's creator, not by the path: the system
// that created the grade manager (of the group) through the API must also be one the app is a
// client of and allow-listed for the route, else 403 "app_code X can not access system Y" or the
// allow-list's 403, permission errors. So an app that is a client of both may manage, grant and
// list a group through either system's path, and the group policy list, which shows only the
// path's system's policies, reads another system's permissions of a group through that system's
// path. A grade manager with no creator record (made in the web UI, or gone: never existed, or
// deleted) answers 403 "not created by system" (the system manager's own groups are the path
// system's): ErrNotOwned tells it from the permission errors by its message, and a caller that
// created the object reads it as gone once a list confirms it. A system creates at most 500 grade
// managers through the API (a site setting; 400 1902412 "可创建的分级管理员数量已超过最大值"). Errors keep their own HTTP status (401, 403, 404, 409 name
// taken: ErrConflict, 400 validation), except IAM backend errors — the 1000-per-call limit (backend
// 1901400), a subject's group quota (1901409), an unknown subject (1901500, "sql: no rows in result
// set") — which come as 1902000 in HTTP 200, refusals that fail at once (above). admin and users
// unknown to IAM are dropped from a member add without an error. A grade manager with sync_perm
// is committed before the backend builds its sync group: a member the backend does not know fails
// the create (or update) with a refusal in 1902000, and the grade manager stays, sync_perm true,
// without its sync group (BackendRefused). An add must keep the group's users
// and departments plus the members sent (present ones counted again) within the SaaS's member limit
// (1000 by default; 400 "超过用户组最大可添加成员数N"): raising the expiry of half a full group through
// adds fails. The expiry route (RaiseMemberExpiry; v2_group_member_expired_at_update) makes no such
// count and ignores members not in the group; the SaaS passes all its members to one backend call,
// whose serializer takes at most 1000 (more is a refusal in 1902000). Lists are paged (page_size with
// no maximum; this client reads 500 a page); the group list and the v1 grade-manager list answer a
// page number past their end with 404 1902404 (the member list, an empty page), which this client
// reads, after the first page, as the end of a list that shrank under the read.
//
// No v2 route lists grade managers. The v1 management API's list does (GradeManagersNamed):
//
//	GET {gw}/api/v1/open/management/grade_managers/?system=S&name=&page&page_size → {count, results: [{id, name, description}]}
//
// the grade managers S created through the API (allow-list name grade_manager_list, no v2_ prefix),
// name a case-insensitive substring; v1 errors other than 401, 403, 404 and 500 come in HTTP 200.
//
// A grade manager's sync group is marked in one list only, v1's group list (SyncGroupIDs):
//
//	GET {gw}/api/v1/open/management/grade_managers/{id}/groups/?page&page_size → {count, results: [{id, name, description,
//	    attributes: {source_type, source_from_role}}]}
//
// (allow-list name group_list, checked for the system that created the grade manager, as the path
// names none; no filters; newest first; the subset managers' groups included; a page past the end
// is empty). The attributes are the SaaS's GroupSaaSAttribute rows, each answered with its default
// when unset. The SaaS sets source_from_role on the group it builds for sync_perm, whichever way it
// builds it (the management API's grade-manager and subset-manager create, the update that turns
// sync_perm on, the web UI, an approved application), and on no other group; a rename (the web
// UI's, or group_name's) keeps it, and the group goes with its attributes when sync_perm is turned
// off. The v2 group list answers readonly, which the sync group does not have, and the grade
// manager's read answers sync_perm but not its sync group: there the sync group is told only by
// IAM's default name, "NAME administrator group" (the SaaS's "-管理员组" in the English it answers
// open APIs in) or "NAME-管理员组" from the web UI, which a rename loses.
// Creates are not idempotent: a create whose answer was lost may have been carried out, and its
// retry then finds the name taken (409). Callers look the name up (GradeManagersNamed, GroupByName)
// to find what IAM made.
//
// IAM's SaaS from its July 2026 release (bk-iam-saas #3143) changes two things here, as far as
// the search index holds it (its migrations add_management_object_api_allow_list_config and the
// model; the permission code and the cap's code were not there to read). Its management object
// allow-list (ManagementObjectAPIAllowListConfig: app_code, object_type role, group or template,
// object_id, api or "*") lets an app call one management API on one object "without being a
// client of the system it belongs to": a bypass of the ownership 403, whose row ObjectAllowEntryOf
// names for the refused call's object (the path's group or grade manager) and API. And it caps the
// expiry that member adds and renewals set at two years from the call, "permanent" aside (#3019, of
// January 2026, lets members be renewed to permanent); the refusal's code and words could not be
// read. The client cannot ask IAM its release: the provider's max_member_expiry says it.
//
// # Policy expressions
//
// A list row's expression is everything the subject holds for the action, merged into one tree, so
// a caller tests for its own atoms and never compares wholes (internal/policyexpr does this). Field
// names drop the system ("host.id"); ids are JSON strings.
//
//	granted                                        expression
//	instance 1                                     {"field":"host.id","op":"eq","value":"1"}
//	instances 1, 2                                 {"field":"host.id","op":"in","value":["1","2"]}
//	path project p1 → mini_app m1                  {"op":"AND","content":[{"field":"mini_app.id","op":"eq","value":"m1"},
//	                                                 {"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}
//	the same, collapsed (see below)                {"field":"mini_app.id","op":"eq","value":"m1"}
//	a path ending at an ancestor                   {"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,2/"}
//	instance "*" (a one-node path of the type)     {"field":"host.id","op":"eq","value":"*"}: the literal id, no wildcard
//	path biz 1 → host "*"                          {"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}
//	any instance (instances [])                    {"field":"host.id","op":"any","value":[]}; no resource type: field ""
//	combined resource (two types)                  {"op":"AND","content":[{"field":"host.id",…},{"field":"script.id",…}]}
//	several combined grants                        {"op":"OR","content":[AND…, AND…]}
//	mixtures                                       {"op":"OR","content":[…]}, nested, never flattened
//
// The published pages also wrap a single condition in OR; both forms are accepted. An instance
// (type, id) is held if an eq or in on "type.id" contains id, or an any on "type.id" (or on "")
// covers it. A path grant (ancestors A, leaf id) is held if an AND of "type.id" ∋ id and
// "type._bk_iam_path_" starts_with "/A…/" exists, or a bare "type.id" ∋ id (the collapse).
//
// The collapse: for a user subject and an action whose instance selection sets ignore_iam_path,
// the SaaS stores a path grant as the bare id — only when the path's length equals the chain of the
// first such selection and the leaf is not "*". Groups are never collapsed. It happens on every
// grant that writes the policy, never on revoke: a later partial revoke writes full paths again, so
// either form can appear.
//
// Only after ancestors is a "*" leaf a wildcard: IAM's translator turns a one-node path of the
// action's type into an id comparison, whatever the id, so instance "*" grants the literal id "*"
// and matches no real instance (ids are plain strings with no character check: "*", "," and "/"
// are all valid ids, though a path string cannot carry "," or "/"). Every instance is an empty
// instances list, the any above.
//
// A path prefix ending in ",*/" (starts_with "/biz,1/set,*/", written for a path whose last node
// is an ancestor type with id "*") means every set under biz 1: the backend and the SDKs strip the
// trailing "*/" and prefix-match, so /biz,1/set,2/ and /biz,1/set,2/module,3/ are covered and
// /biz,1/module,2/ is not.
//
// # Where the real server differs from a first reading
//
// Reading back:
//   - A subject can have several rows for one action. The backend has no unique (subject, action)
//     key: a group's custom policy and each permission template's policy for the same action are
//     separate rows, each with its own backend id, and the subject holds their union. Taking the
//     highest id as "the" policy can hide a custom grant behind a template row.
//   - RBAC actions: for a group subject and an action whose auth_type is "rbac" or "all", a
//     single-type instance grant is stored as RBAC relations, not as an expression. It is missing
//     from the default list and listed only with ?type=rbac (ids offset by 500000000, same row
//     shape). Any-policies and multi-type policies stay in the default (abac) list.
//   - The open list route through a gateway: the gateway registers it without the trailing slash
//     and forwards it so, while the backend serves only the slashed path and answers 301 with a
//     backend-relative Location. Through a real gateway the open route most likely fails and the
//     legacy route works (read from the gateway's and backend's code; not seen on a live site).
//     Redirects are never followed (see Config): a 301 becomes an error with advice.
//
// Writing:
//   - Ids are trimmed: system, type, instance, subject and action ids lose surrounding white space
//     (names do not). An id sent as " 1" is stored as "1".
//   - An unknown action is 1902412 ("x action not exists"), after the allow-list check, which answers
//     1902403 first unless the app is allowed every action. Resources that do not match the action:
//     1902417 (ACTION_VALIDATE_ERROR).
//   - Combined resources: a grant appends a resource group unless an existing group already contains
//     it (groups it contains are dropped). A revoke removes only the groups fully contained in the
//     revoked one; a partial overlap is a silent no-op that still answers OK.
//   - Expiry on re-grant: an existing policy's expiry changes only if the new expired_at is greater;
//     0 or none changes nothing. The 365-day default applies to new user policies only. The expiry
//     is the policy's, for everything it holds: a grant of one instance with a later expired_at
//     raises it for every instance (seen on the real IAM), and so does a grant of what the policy
//     already holds, which adds nothing (the SaaS updates a policy that contains the grant when only
//     its expiry is later), or of a combination a stored group contains. A renewal sends one
//     instance (internal/grantplan).
//   - A revoke with instances [] on an instance policy removes nothing (only policies of actions
//     without a resource type are deleted whole by it). Never send it anyway.
//   - batch_path checks only that the app is a client of the system; the per-action allow-list
//     applies to batch_instance.
//   - Group subjects: ids are not checked by the serializer. A grant to an unknown group fails with
//     an unhandled error, 1902500 and HTTP 500; a revoke does not check at all (OK, data []). A
//     group grant also widens the group's grade-manager authorization scope to cover it
//     (incr_update_auth_scope), and no revoke narrows it back: seen on the real IAM, the management
//     API then granted the instance to the grade manager's other groups. Neither the authorization
//     nor the management API grants anything else beside a grant: the related actions (依赖操作)
//     are added by the web UI (its related-policy route), not by the APIs; a grant's answer lists
//     every policy the subject holds, which can read as such an addition and is not one.
//   - An unknown user is 1902412 "user[x] not exists".
//   - A creator configuration may list actions related to no resource type: the creator gets them
//     as unlimited (any) policies, which no batch_path revoke can undo. A creator action of another
//     resource type fails at grant time with 1902417.
//   - statistics is always present; an admin echo counts the requested instances; a revoke that
//     empties a policy reports the old count.
//   - The gateway marks batch_instance deprecated and non-public (it still works); batch_path is the
//     public call and does the same with one-node paths.
//
// # What a real IAM answered
//
// The SaaS (bk-iam-saas) and backend (bk-iam), built from their sources and run behind a stand-in for
// the API gateway that routes by the real gateway's table, answered this provider's calls so:
//   - A grant's answer lists every custom policy the subject holds in the system, for batch_instance,
//     batch_path and batch_resource_creator_action alike; a revoke's lists the requested actions that
//     had a policy, with the old policy_id and count when it emptied one. A creator grant's answer
//     therefore names the creator's policies of other types too: a creator grant without expected
//     actions takes only those of its type's creator configuration from it (the provider reads them
//     from the model), since revoking another type's action from the created paths fails.
//   - policy_id in those answers is the SaaS's own row id; the backend's policy list (Reading grants
//     back) numbers the same policy otherwise (alice's grant: 1 in the answer, 7 in the list). The
//     provider stores only answers' ids (a grant's policies attribute), never the list's.
//   - A creator grant takes the configuration's optional actions (required: false) as well as the
//     required ones. With ancestors, the SaaS asks the system's resource provider for their names, and
//     an unreachable provider is 1902200 "… API unreachable!".
//   - batch_path checks each action against the resource types first (before the action check that
//     batch_instance runs): a type the action does not relate to, or any type for an action related
//     to none, is 1902412 "Parameter verification failed: action(x) not support to grant instance";
//     an unknown action is 1902000, the SaaS's failed call to the backend, whose message quotes the
//     backend's 1901500 "… sql: no rows in result set": a refusal, not retried (a plan-time model
//     check refuses unknown actions first).
//   - Validation errors come in HTTP 200 with result false (1902412, 1902417); 401, 403 and 409
//     come with those HTTP statuses. The SaaS's codes are 19024xx (its own) and 1902000 (its
//     backend failed); the backend's own are 19014xx. Texts raised by code start "Parameter
//     verification failed: "; field errors are the serializer's JSON; the action check's texts start
//     "Action check error: action `x` related resource types".
//   - Users: a user the SaaS does not know yet but the user directory does is synced on first use by
//     the authorization API (a grant to them works); the management API's member add does not sync
//     and drops such members silently, as it drops unknown ones. A creator the directory does not
//     know is 1902412 "Parameter verification failed: user[x] not exists".
//   - Policies written straight into the backend are rows of their own beside the SaaS's; the SaaS
//     merges a grant only with what it wrote itself.
//   - A group permission granted through the management API is listed with the names the system's
//     resource provider gives its instances, not the names the grant sent (sent "tfacc-h1", listed
//     "host-tfacc-h1"); an import of it reads IAM's names. (The sandbox lists names empty.)
//   - Access needs the path: for alice holding host_edit as "host._bk_iam_path_" starts_with
//     "/biz,1/" (a batch_path grant of [biz 1, host *]), auth_by_actions answered true for host h7
//     sent with "attribute": {"_bk_iam_path_": ["/biz,1/"]} and false with "attribute": {}.
package bkiam
