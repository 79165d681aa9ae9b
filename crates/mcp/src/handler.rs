//! rmcp's `ServerHandler` for [`QuireServer`]: what the server declares at `initialize` (capabilities, identity,
//! instructions) and which module answers each request.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::context::from_mcp_level;
use crate::server::{INSTRUCTIONS, QuireServer};
use crate::{prompts, subscriptions, tools, workspace_resources};

impl ServerHandler for QuireServer {
    #[expect(
        deprecated,
        reason = "logging is deprecated in 2026-07-28 and still declared for 2025-11-25"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")).with_title("quire notes"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        tools::list(self, request, ctx).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::get(self, name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        tools::call(self, request, ctx).await
    }

    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated in 2026-07-28 and still served to 2025-11-25"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.session.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(from_mcp_level(request.level));
        Ok(())
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        subscriptions::on_initialized(self, ctx).await;
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        subscriptions::accepted_filter(requested)
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        subscriptions::listen(self, ctx).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        subscriptions::subscribe(self, request, ctx).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        subscriptions::unsubscribe(self, &request.uri);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        workspace_resources::list(self, request, ctx).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(workspace_resources::templates(self))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        workspace_resources::read(self, request, ctx).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        prompts::list(self)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(self, request, ctx).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        prompts::complete(self, request, ctx).await
    }
}
